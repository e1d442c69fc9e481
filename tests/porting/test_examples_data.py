"""MXNet example scripts of the data pipeline (tools/im2rec.py, tools/rec2idx.py,
example/image-classification data iterators, Gluon data loaders, distributed training):
behaviours found by running them against plexnet (docs/porting-examples.md)."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import plexnet as mx
from plexnet.tools import im2rec, rec2idx

cv2 = pytest.importorskip("cv2")

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")


def _fixture_images():
    spec = importlib.util.spec_from_file_location("examples_data_images", os.path.join(FIX, "examples_data_images.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.make_image_folder


@pytest.fixture(scope="module")
def mxnet_im2rec():
    with open(os.path.join(FIX, "examples_data", "mxnet_im2rec.json")) as f:
        meta = json.load(f)
    return meta, np.load(os.path.join(FIX, "examples_data", "mxnet_im2rec.npz"))


@pytest.mark.parametrize("case", ["split", "chunks", "flat"])
def test_im2rec_writes_mxnets_lists_and_records(tmp_path, mxnet_im2rec, case):
    # MXNet 1.9.1's tools/im2rec.py on the same folder (tests/fixtures/make_mxnet_im2rec_fixtures.py)
    meta, arrays = mxnet_im2rec
    spec = meta[case]
    _fixture_images()(str(tmp_path / "imgs"))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert im2rec.main(spec["list_args"] + ["data", "imgs"]) == 0
        assert im2rec.main(spec["pack_args"] + ["data", "imgs"]) == 0
    finally:
        os.chdir(cwd)
    got = sorted(f for f in os.listdir(tmp_path) if f.endswith((".lst", ".rec")))
    assert got == sorted(spec["files"])
    for fname, want in spec["files"].items():
        if fname.endswith(".lst"):
            assert (tmp_path / fname).read_text() == want, fname
            continue
        stem = fname[:-4]
        rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / (stem + ".idx")), str(tmp_path / fname), "r")
        assert rec.keys == [w["key"] for w in want]
        for w in want:
            header, img = mx.recordio.unpack(rec.read_idx(w["key"]))
            assert header.id == w["id"] and np.asarray(header.label).tolist() == w["label"]
            px = cv2.imdecode(np.frombuffer(img, np.uint8), -1)
            np.testing.assert_array_equal(px, arrays[f"{case}/{stem}/{w['key']}"])
        rec.close()


def test_im2rec_pack_label_and_pass_through(tmp_path):
    # multi-column labels: --pack-label stores all of them (an IRHeader label array), else the first
    make = _fixture_images()
    make(str(tmp_path / "imgs"))
    lst = "3\t1.000000\t0.500000\t2.000000\tcat/img0.jpg\n7\t0.000000\t0.250000\t3.000000\tdog/img3.png\n"
    for sub, extra in (("a", ["--pack-label"]), ("b", []), ("c", ["--pass-through"])):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "ml.lst").write_text(lst)
        assert im2rec.main(extra + [str(tmp_path / sub / "ml"), str(tmp_path / "imgs")]) == 0
    rec_a = mx.recordio.MXIndexedRecordIO(str(tmp_path / "a/ml.idx"), str(tmp_path / "a/ml.rec"), "r")
    rec_b = mx.recordio.MXIndexedRecordIO(str(tmp_path / "b/ml.idx"), str(tmp_path / "b/ml.rec"), "r")
    rec_c = mx.recordio.MXIndexedRecordIO(str(tmp_path / "c/ml.idx"), str(tmp_path / "c/ml.rec"), "r")
    assert rec_a.keys == rec_b.keys == [3, 7]
    ha, _ = mx.recordio.unpack(rec_a.read_idx(3))
    hb, _ = mx.recordio.unpack(rec_b.read_idx(3))
    assert ha.flag == 3 and np.asarray(ha.label).tolist() == [1.0, 0.5, 2.0] and ha.id == 3
    assert hb.flag == 0 and hb.label == 1.0
    hc, raw = mx.recordio.unpack(rec_c.read_idx(7))
    assert raw == (tmp_path / "imgs/dog/img3.png").read_bytes()  # the file as is


def test_im2rec_reports_bad_images_and_missing_lists(tmp_path, capfd):
    make = _fixture_images()
    make(str(tmp_path / "imgs"))
    (tmp_path / "imgs" / "broken.jpg").write_bytes(b"not a jpeg")
    (tmp_path / "d.lst").write_text("0\t0.000000\tbroken.jpg\n1\t0.000000\timg0.jpg\nbad line\n")
    assert im2rec.main([str(tmp_path / "d"), str(tmp_path / "imgs"), "--num-thread", "2"]) == 0
    out = capfd.readouterr().out
    assert "imread read blank (None) image" in out and "lst should have at least" in out
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "d.idx"), str(tmp_path / "d.rec"), "r")
    assert rec.keys == [1]  # the broken image is skipped
    assert im2rec.main([str(tmp_path / "nothing"), str(tmp_path / "imgs")]) == 1
    assert "Did not find and list file with prefix" in capfd.readouterr().out


def test_rec2idx_offsets_are_mxnets(tmp_path, mxnet_im2rec):
    meta, _ = mxnet_im2rec
    sizes, offsets = meta["rec2idx"]["sizes"], meta["rec2idx"]["offsets"]
    w = mx.recordio.MXRecordIO(str(tmp_path / "r.rec"), "w")
    for n in sizes:
        w.write(b"x" * n)
    w.close()
    assert rec2idx.main([str(tmp_path / "r.rec"), str(tmp_path / "r.idx")]) == 0
    lines = (tmp_path / "r.idx").read_text().splitlines()
    assert lines == [f"{i}\t{o}" for i, o in enumerate(offsets)]
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "r.idx"), str(tmp_path / "r.rec"), "r")
    assert [len(rec.read_idx(k)) for k in rec.keys] == sizes
    # an IndexCreator subclass with another key type, as MXNet's class allows
    creator = rec2idx.IndexCreator(str(tmp_path / "r.rec"), str(tmp_path / "s.idx"), key_type=lambda i: f"k{i}")
    assert creator.create_index() == len(sizes)
    creator.close()
    assert (tmp_path / "s.idx").read_text().splitlines()[1] == f"k1\t{offsets[1]}"


def test_im2rec_and_rec2idx_are_commands(tmp_path):
    # `python -m plexnet.tools.im2rec` (MXNet: python -m mxnet.tools.im2rec) and `plexnet im2rec`
    make = _fixture_images()
    make(str(tmp_path / "imgs"))
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    r = subprocess.run([sys.executable, "-m", "plexnet.tools.im2rec", "--list", "--recursive", "data", "imgs"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[:2] == [". 0", "cat 1"]
    r = subprocess.run([sys.executable, "-m", "plexnet", "im2rec", "data", "imgs"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "plexnet", "rec2idx", "data.rec", "again.idx"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    n = len((tmp_path / "data.lst").read_text().splitlines())
    assert len((tmp_path / "again.idx").read_text().splitlines()) == n == 14


def test_get_im2rec_path_is_a_runnable_script(tmp_path, monkeypatch):
    # MXNet's tests run `python <get_im2rec_path()> ...`; plexnet's file runs as a script too
    monkeypatch.delenv("MXNET_HOME", raising=False)
    path = mx.test_utils.get_im2rec_path()
    assert os.path.basename(path) == "im2rec.py" and os.path.isfile(path)
    _fixture_images()(str(tmp_path / "imgs"))
    for args in (["--list", "data", "imgs"], ["data", "imgs"]):
        r = subprocess.run([sys.executable, path] + args, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "data.idx"), str(tmp_path / "data.rec"), "r")
    assert sorted(rec.keys) == [0, 1]  # the two images at the top of the folder (not recursive)


def test_lr_scheduler_logs_on_the_root_logger(caplog):
    # train_cifar10.py's log shows MXNet's "INFO:root:Update[31]: Change learning rate to 1.00000e-02"
    sched = mx.lr_scheduler.MultiFactorScheduler(step=[2], factor=0.1, base_lr=0.1)
    with caplog.at_level("INFO"):
        assert sched(1) == 0.1 and abs(sched(3) - 0.01) < 1e-12
    rec = [r for r in caplog.records if "Change learning rate" in r.getMessage()]
    assert rec and rec[0].name == "root" and rec[0].getMessage() == "Update[3]: Change learning rate to 1.00000e-02"


@pytest.mark.parametrize("case", ["lin", "cubic", "area", "nearest", "wide", "tall", "pad"])
def test_image_record_iter_scales_small_images_up(tmp_path, case):
    # train_imagenet.py (min_random_scale < 1) feeds images smaller than data_shape: MXNet 1.9.1
    # scales them up (rows, then columns, aspect kept) and crops; plexnet used to refuse them
    from plexnet.io import decode  # OpenCV's encoder, as the fixture's
    ref = np.load(os.path.join(FIX, "examples_data", "mxnet_small_images.npz"))
    kw = {"lin": dict(data_shape=(3, 32, 32)), "cubic": dict(data_shape=(3, 32, 32), inter_method=2),
          "area": dict(data_shape=(3, 32, 32), inter_method=3), "nearest": dict(data_shape=(3, 32, 32), inter_method=0),
          "wide": dict(data_shape=(3, 16, 40)), "tall": dict(data_shape=(3, 30, 10)),
          "pad": dict(data_shape=(3, 32, 32), pad=2, fill_value=200)}[case]
    for k in "abcd":
        path = str(tmp_path / f"{k}.rec")
        rec = mx.recordio.MXRecordIO(path, "w")
        png = decode.cv2().imencode(".png", ref["img_" + k])[1].tobytes()
        rec.write(mx.recordio.pack(mx.recordio.IRHeader(0, 1.0, 0, 0), png))
        rec.close()
        it = mx.io.ImageRecordIter(path_imgrec=path, batch_size=1, **kw)
        got = next(iter(it)).data[0].asnumpy()[0]
        want = ref[f"{k}_{case}"]
        assert got.shape == want.shape
        # bicubic rounds differently by one level between OpenCV 4.8 (the fixture's) and 5
        np.testing.assert_allclose(got, want, atol=1 if case == "cubic" else 0)


def test_launch_takes_mxnets_tools_launch_command_line(monkeypatch):
    # MXNet users start `python tools/launch.py -n 2 --launcher local python train.py --kv-store dist_sync`
    launch = pytest.importorskip("plexnet_kvstore_dist.launch")
    ns = launch.parse_args(["-n", "2", "--launcher", "local", "python", "train.py", "--kv-store", "dist_sync",
                            "--num-epochs", "1"])
    assert ns.num_workers == 2 and ns.num_servers == 1
    assert ns.command == ["python", "train.py", "--kv-store", "dist_sync", "--num-epochs", "1"]
    assert launch.parse_args(["-n", "1", "--", "python", "t.py", "-n", "3"]).command == ["python", "t.py", "-n", "3"]
    monkeypatch.setenv("PX_FROM_LAUNCHER", "7")
    monkeypatch.delenv("PX_UNSET", raising=False)
    ns = launch.parse_args(["-n", "2", "--env", "OMP_NUM_THREADS:3", "--env", "PX_FROM_LAUNCHER", "--env", "PX_UNSET",
                            "--env", "A=1=2", "--env-worker", "B:x:y", "--env-server", "C:4", "python", "t.py"])
    assert ns.env == ["OMP_NUM_THREADS=3", "PX_FROM_LAUNCHER=7", "A=1=2", "B=x:y"] and ns.env_server == ["C=4"]
    for bad in (["--launcher", "ssh"], ["-H", "hosts"], ["--env-worker", "NOVALUE"]):
        with pytest.raises(SystemExit) as e:
            launch.parse_args(["-n", "2"] + bad + ["python", "t.py"])
        assert e.value.code == 2


def test_dataloader_workers_leave_no_shared_memory_at_exit(tmp_path):
    # example/gluon/image_classification.py keeps its DataLoader(num_workers=...) alive until
    # exit: Python then printed "resource_tracker: There appear to be N leaked shared_memory
    # objects" (the daemonic workers were terminated before they freed their blocks)
    script = tmp_path / "s.py"
    script.write_text(
        "import numpy as np\nimport plexnet as mx\n"
        "ds = mx.gluon.data.ArrayDataset(np.arange(64, dtype='float32').reshape(16, 4), np.arange(16))\n"
        "dl = mx.gluon.data.DataLoader(ds, batch_size=4, num_workers=2)\n"
        "n = sum(int(x.shape[0]) for _ in range(2) for x, y in dl)\n"
        "print(n)\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "32", r.stderr
    assert "leaked" not in r.stderr, r.stderr
