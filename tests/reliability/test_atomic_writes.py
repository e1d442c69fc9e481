"""Point 5 of issue 13: every writer is atomic and honours the umask.

A write that dies half-way (a monkeypatched failure, or a subprocess SIGKILLed while it
writes) leaves the old file intact; the next successful save removes the temp files a
killed writer left; new files get ``0o666 & ~umask``.
"""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import plexnet as mx
from plexnet import fileio
from plexnet.model import save_checkpoint
from plexnet.recordio import MXIndexedRecordIO, MXRecordIO


def _sym():
    return mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")


def _writers(tmp_path):
    """name -> (path, write function with a 'version' argument)."""
    def nd_save(v):
        mx.nd.save(str(tmp_path / "a.params"), {"w": mx.nd.full((4,), v)})

    def sym_save(v):
        mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=int(v), name="fc").save(
            str(tmp_path / "s.json"))

    def ckpt(v):
        save_checkpoint(str(tmp_path / "m"), 1, _sym(), {"fc_weight": mx.nd.full((3, 2), v)}, {})

    def rec(v):
        w = MXRecordIO(str(tmp_path / "r.rec"), "w")
        for i in range(3):
            w.write(f"rec{v}-{i}".encode())
        w.close()

    def idx(v):
        w = MXIndexedRecordIO(str(tmp_path / "i.idx"), str(tmp_path / "i.rec"), "w")
        for i in range(3):
            w.write_idx(i, f"rec{v}-{i}".encode())
        w.close()

    def trainer_states(v):
        from plexnet import gluon
        net = gluon.nn.Dense(2, in_units=3)
        net.initialize(mx.init.Constant(v))
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1 * v, "momentum": 0.9},
                           kvstore=None)
        tr.save_states(str(tmp_path / "t.states"))

    return {"nd.save": ("a.params", nd_save), "Symbol.save": ("s.json", sym_save),
            "save_checkpoint": ("m-0001.params", ckpt), "MXRecordIO": ("r.rec", rec),
            "MXIndexedRecordIO": ("i.rec", idx), "Trainer.save_states": ("t.states", trainer_states)}


WRITERS = ["nd.save", "Symbol.save", "save_checkpoint", "MXRecordIO", "MXIndexedRecordIO", "Trainer.save_states"]


@pytest.mark.parametrize("name", WRITERS)
def test_failed_write_keeps_old_file(tmp_path, monkeypatch, name):
    fname, write = _writers(tmp_path)[name]
    write(1)
    before = (tmp_path / fname).read_bytes()
    assert before

    real_fsync = os.fsync

    def boom(fd):  # the disk fails just before the data would be made durable
        raise OSError(28, "No space left on device (injected)")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="injected"):
        write(2)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert (tmp_path / fname).read_bytes() == before
    assert not [p for p in os.listdir(tmp_path) if p.endswith(fileio.TMP_SUFFIX)]
    write(3)
    assert (tmp_path / fname).read_bytes() != before


_KILLED_WRITER = textwrap.dedent("""
    import os, sys
    from plexnet import fileio
    f = fileio.AtomicFile(sys.argv[1])
    f.write(b"N" * 100000)
    f.file.flush()
    print("written", flush=True)
    sys.stdin.read()          # hold the half-written temp file until killed
""")


def test_killed_writer_leaves_old_file_and_temp_is_cleaned(tmp_path):
    target = tmp_path / "x.params"
    fileio.atomic_write(target, b"OLD")
    p = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(target)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "written"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=30)
    assert target.read_bytes() == b"OLD"
    stale = [n for n in os.listdir(tmp_path) if n.endswith(fileio.TMP_SUFFIX)]
    assert len(stale) == 1 and str(p.pid) in stale[0]
    # a legacy temp of the old nd.save naming, from a dead process, goes too
    (tmp_path / f"x.params.tmp-{p.pid}").write_bytes(b"half")
    fileio.atomic_write(target, b"NEW")
    assert target.read_bytes() == b"NEW"
    assert sorted(os.listdir(tmp_path)) == ["x.params"]


def test_live_writers_temp_is_not_removed(tmp_path):
    target = tmp_path / "y.bin"
    af = fileio.AtomicFile(target)  # our own pid: alive, maybe another thread's write
    af.write(b"partial")
    fileio.atomic_write(target, b"done")
    assert os.path.exists(af.tmp)
    af.commit()
    assert target.read_bytes() == b"partial"


@pytest.mark.parametrize("name", WRITERS)
def test_new_files_honour_umask(tmp_path, name):
    fname, write = _writers(tmp_path)[name]
    old = os.umask(0o022)
    try:
        write(1)
        assert stat.S_IMODE(os.stat(tmp_path / fname).st_mode) == 0o644
        os.remove(tmp_path / fname)
        os.umask(0o002)
        write(1)
        assert stat.S_IMODE(os.stat(tmp_path / fname).st_mode) == 0o664
    finally:
        os.umask(old)


def test_replacing_keeps_existing_mode(tmp_path):
    p = tmp_path / "k.params"
    mx.nd.save(str(p), [mx.nd.ones((2,))])
    os.chmod(p, 0o640)
    mx.nd.save(str(p), [mx.nd.zeros((2,))])
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    np.testing.assert_array_equal(mx.nd.load(str(p))[0].asnumpy(), [0, 0])


def test_recordio_reads_back_after_atomic_close(tmp_path):
    w = MXIndexedRecordIO(str(tmp_path / "i.idx"), str(tmp_path / "i.rec"), "w")
    for i in range(5):
        w.write_idx(i, b"x" * i)
    assert not os.path.exists(tmp_path / "i.rec")  # not visible before close
    w.close()
    r = MXIndexedRecordIO(str(tmp_path / "i.idx"), str(tmp_path / "i.rec"), "r")
    assert [r.read_idx(i) for i in range(5)] == [b"x" * i for i in range(5)]
    r.close()


def test_devices_and_symlinks(tmp_path):
    fileio.atomic_write(os.devnull, b"data")  # written directly: a device node is never replaced
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    (tmp_path / "real.params").write_bytes(b"old")
    os.symlink("real.params", tmp_path / "link.params")
    mx.nd.save(str(tmp_path / "link.params"), [mx.nd.ones((2,))])
    assert os.path.islink(tmp_path / "link.params")  # the link stays, its target is replaced
    np.testing.assert_array_equal(mx.nd.load(str(tmp_path / "real.params"))[0].asnumpy(), [1, 1])
