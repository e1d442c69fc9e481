"""Unit tests of plexnet's CuPy simulator itself (no plexnet GPU backend involved: the
simulator's module object is used directly, with its state reset per test)."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

sim = pytest.importorskip("plexnet_device_cuda.simulator", reason="plexnet-device-cuda is not installed")

from plexnet_device_cuda import cupy_loader  # noqa: E402

if cupy_loader.simulated:  # plexnet's gpu backend uses the simulator in this process: leave it alone
    pytest.skip("PLEXNET_CUDA_SIMULATE is set: these tests reset the simulator's devices",
                allow_module_level=True)

pytestmark = pytest.mark.timeout(60)

cp = sim.cupy


@pytest.fixture(autouse=True)
def two_devices():
    sim.reset(num_devices=2, memory_bytes=64 << 20, peer_access=False, hazards="raise")
    yield
    sim.reset()


# -- host/device discipline -------------------------------------------------------------------
def test_ndarray_is_its_own_class_and_refuses_implicit_conversion():
    a = cp.arange(6, dtype=np.float32)
    assert type(a) is cp.ndarray and not isinstance(a, np.ndarray)
    with pytest.raises(TypeError, match=r"Implicit conversion to a NumPy array is not allowed\. "
                                        r"Please use `\.get\(\)` to construct a NumPy array explicitly\."):
        np.asarray(a)
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.array(a)
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.ascontiguousarray(a)


@pytest.mark.parametrize("call", [
    lambda a, h: a + h, lambda a, h: h + a, lambda a, h: a * h, lambda a, h: cp.add(a, h),
    lambda a, h: cp.maximum(h, a), lambda a, h: cp.dot(a, h), lambda a, h: cp.concatenate([a, h]),
    lambda a, h: cp.sum(h), lambda a, h: cp.where(a > 0, a, h), lambda a, h: a.dot(h),
    lambda a, h: np.add(a, h), lambda a, h: np.concatenate([a, h]), lambda a, h: cp.add(a, a, out=h),
    lambda a, h: cp.ascontiguousarray(h), lambda a, h: cp.exp(h),
], ids=["op", "rop", "mul", "ufunc", "ufunc2", "dot", "concatenate", "sum", "where", "method", "np.add",
        "np.concatenate", "out", "ascontiguousarray", "exp"])
def test_host_arrays_are_rejected(call):
    a = cp.ones(3, dtype=np.float32)
    h = np.ones(3, dtype=np.float32)
    with pytest.raises(TypeError, match="Unsupported type <class 'numpy.ndarray'>|incorrect type|"
                                        "Output arguments"):
        call(a, h)


def test_scalars_and_explicit_copies_are_fine():
    h = np.arange(4, dtype=np.float32)
    a = cp.asarray(h)                 # host -> device copy
    h[0] = 100                        # ... a copy: the device array does not change
    b = a * 2 + np.float32(1) - 0.5 + True
    assert isinstance(b, cp.ndarray)
    np.testing.assert_array_equal(b.get(), np.arange(4) * 2 + 1.5)
    np.testing.assert_array_equal(cp.asnumpy(cp.array([1, 2, 3])), [1, 2, 3])
    c = cp.empty(4, dtype=np.float32)
    c.set(np.ones(4, np.float32))
    np.testing.assert_array_equal(c.get(), np.ones(4))
    with pytest.raises(TypeError, match="Only numpy.ndarray can be set"):
        c.set([1, 2, 3, 4])
    assert cp.get_array_module(a) is cp and cp.get_array_module(h) is np
    assert cp.zeros_like(h).shape == (4,)          # metadata of a host array is fine (CuPy too)
    with pytest.raises(ValueError, match="non-scalar numpy.ndarray cannot be used for fill"):
        c[...] = np.ones(4, np.float32)            # CuPy: basic setitem of a host array
    c[np.array([0, 2])] = np.array([5, 6], np.float32)  # advanced setitem copies values (CuPy too)
    np.testing.assert_array_equal(c.get(), [5, 1, 6, 1])


def test_reductions_return_0d_arrays_and_scalar_conversions_copy():
    a = cp.arange(5, dtype=np.float64)
    s = a.sum()
    assert isinstance(s, cp.ndarray) and s.shape == ()
    assert float(s) == 10.0 and int(a.max()) == 4 and s.item() == 10.0 and bool(s)
    assert isinstance(np.sum(a), cp.ndarray)       # __array_function__ dispatches to CuPy's
    assert isinstance(np.exp(a), cp.ndarray)       # __array_ufunc__ too
    assert a[2].shape == () and isinstance(a[2], cp.ndarray)
    with pytest.raises(ValueError, match="truth value"):
        bool(a)


# -- the CuPy namespace -----------------------------------------------------------------------------
def test_names_missing_from_cupy_raise_attribute_error_naming_them():
    with pytest.raises(AttributeError, match=r"module 'cupy' has no attribute 'nanpercentile'.*numpy"):
        cp.nanpercentile
    with pytest.raises(AttributeError, match="module 'cupy.linalg' has no attribute 'multi_dot'"):
        cp.linalg.multi_dot
    with pytest.raises(AttributeError, match="'cupy.ndarray' object has no attribute 'resize'"):
        cp.ones(2).resize
    with pytest.raises(TypeError, match="no implementation found"):
        np.nanpercentile(cp.ones(3), 50)   # numpy defers to CuPy, which has no such function
    assert "nanpercentile" not in dir(cp) and "sum" in dir(cp)


def test_cupy_names_that_are_not_simulated_say_so():
    with pytest.raises(AttributeError, match="cupy.cuda.Graph exists in CuPy .* not provided"):
        cp.cuda.Graph
    with pytest.raises(NotImplementedError, match="custom CUDA kernels"):
        cp.ElementwiseKernel("T x", "T y", "y = x", "copy")


def test_keywords_are_checked_against_cupy_signatures():
    a = cp.ones((2, 3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'where'"):
        cp.sum(a, where=a > 0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'where'"):
        a.sum(where=a > 0)
    with pytest.raises(TypeError, match="Wrong arguments"):
        cp.add(a, a, where=a > 0)
    np.testing.assert_array_equal(cp.sum(a, axis=1, keepdims=True).get(), [[3], [3]])


def test_ufunc_methods_only_where_cupy_has_them():
    a = cp.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(cp.add.reduce(a, axis=0).get(), [3, 5, 7])
    np.testing.assert_array_equal(cp.multiply.accumulate(cp.asarray([1, 2, 3])).get(), [1, 2, 6])
    with pytest.raises(NotImplementedError, match="cupy_maximum.reduce"):
        cp.maximum.reduce(a)
    x = cp.zeros(4, dtype=np.float32)
    cp.add.at(x, np.array([0, 0, 1]), 1)
    np.testing.assert_array_equal(x.get(), [2, 1, 0, 0])
    with pytest.raises(NotImplementedError, match="cupy_sqrt.at"):
        cp.sqrt.at(x, [0])
    np.testing.assert_array_equal(cp.multiply.outer(cp.arange(2), cp.arange(3)).get(), [[0, 0, 0], [0, 1, 2]])


def test_snapshot_records_real_cupy():
    from plexnet_device_cuda import cupy_names
    snap = cupy_names.load()
    assert snap["cupy_version"] == sim.CUPY_VERSION
    assert {"cupy", "cupy.linalg", "cupy.random", "cupy.fft", "cupy.lib.stride_tricks"} <= set(snap["modules"])
    assert snap["modules"]["cupy"]["add"]["kind"] == "ufunc"
    assert "get" in snap["classes"]["cupy.ndarray"] and "resize" not in snap["classes"]["cupy.ndarray"]


def test_snapshot_is_current_where_cupy_is_importable(tmp_path):
    pytest.importorskip("cupy", reason="CuPy is not installed here (the snapshot is regenerated where it is)")
    from plexnet_device_cuda import cupy_names
    assert cupy_names.main(["--check"]) == 0


# -- views and memory ----------------------------------------------------------------------------
def test_numpy_exceptions_resolve_on_numpy_1_and_2():
    # numpy 2 moved them to np.exceptions (numpy >= 1.25); numpy 1.23/1.24 have them at the top
    for name in ("AxisError", "ComplexWarning", "TooHardError", "VisibleDeprecationWarning"):
        exc = getattr(cp, name)
        assert issubclass(exc, Warning if name.endswith("Warning") else Exception)
    with pytest.raises(cp.AxisError):
        cp.zeros((2, 3)).sum(axis=5)
    assert cp.zeros((2, 3, 4)).mT.shape == (2, 4, 3)


def test_views_share_memory():
    a = cp.zeros((4, 6), dtype=np.float32)
    views = [a[1], a[:, 2:4], a.T, a.reshape(6, 4), a.view(np.int32), a[::2, ::3],
             cp.lib.stride_tricks.as_strided(a, (2, 2), (24, 4)), a.ravel(), cp.expand_dims(a, 0), a.mT]
    for v in views:
        assert cp.may_share_memory(v, a) and v.data.mem is a.data.mem
    a[1] = 3
    assert float(views[0].sum()) == 18 and float(views[3].sum()) == 18 * 1
    views[1][...] = 7
    assert float(a[:, 2:4].sum()) == 7 * 8
    copy = a[[0, 2]]                                    # advanced indexing copies
    assert not cp.may_share_memory(copy, a)
    assert a[1:].data.ptr - a.data.ptr == 6 * 4


def test_memory_pointer_arrays_and_device_memory_accounting():
    pool = cp.get_default_memory_pool()
    pool.free_all_blocks()
    free0, total = cp.cuda.runtime.memGetInfo()
    assert total == 64 << 20
    mem = cp.cuda.Memory(4096)
    assert cp.cuda.runtime.memGetInfo()[0] == free0 - 4096
    arr = cp.ndarray((16,), np.float32, memptr=cp.cuda.MemoryPointer(mem, 64))
    arr[...] = 1.5
    whole = cp.ndarray((1024,), np.float32, memptr=cp.cuda.MemoryPointer(mem, 0))
    assert float(whole[16:32].sum()) == 24 and arr.data.ptr == mem.ptr + 64
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="cudaErrorMemoryAllocation") as e:
        cp.cuda.Memory(128 << 20)
    assert e.value.status == 2
    del arr, whole, mem
    pool.free_all_blocks()          # the 0-d result of sum() is cached by CuPy's pool
    assert cp.cuda.runtime.memGetInfo()[0] == free0


def test_default_memory_pool_accounts_arrays_and_runs_out():
    pool = cp.get_default_memory_pool()
    used = pool.used_bytes()
    a = cp.zeros(1 << 20, dtype=np.uint8)
    assert pool.used_bytes() == used + (1 << 20)
    del a
    assert pool.used_bytes() == used and pool.free_bytes() >= 1 << 20
    pool.free_all_blocks()
    assert pool.free_bytes() == 0
    with pytest.raises(cp.cuda.memory.OutOfMemoryError, match="Out of memory allocating"):
        cp.empty(100 << 20, dtype=np.uint8)


# -- devices ---------------------------------------------------------------------------------------
def test_current_device_is_per_thread_and_arrays_live_where_made():
    with cp.cuda.Device(1):
        b = cp.ones(3)
        assert cp.cuda.Device().id == 1 and cp.cuda.runtime.getDevice() == 1
    assert b.device.id == 1 and cp.cuda.Device().id == 0
    seen = []
    cp.cuda.Device(1).use()
    t = threading.Thread(target=lambda: seen.append(cp.cuda.Device().id))
    t.start()
    t.join()
    assert seen == [0]                      # a new thread starts on device 0, as in CUDA
    cp.cuda.Device(0).use()
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="invalid device ordinal"):
        cp.cuda.Device(2).use()
    assert cp.cuda.runtime.getDeviceCount() == 2


def test_kernels_on_arrays_of_another_device_need_peer_access():
    a = cp.ones(3)
    cp.cuda.Device(0).synchronize()          # the legacy streams of two devices are not ordered
    with cp.cuda.Device(1):
        b = cp.ones(3)
        with pytest.raises(ValueError, match=r"resides \(0\) is different from the current device \(1\)\. "
                                             r"Peer access is unavailable"):
            a + b
        c = cp.empty(3)
        c[...] = a                          # a contiguous same-dtype copy is a cudaMemcpy: allowed
        assert c.device.id == 1
    np.testing.assert_array_equal(c.get(), [1, 1, 1])
    sim.reset(num_devices=2, peer_access=True)
    a = cp.ones(3)
    cp.cuda.Device(0).synchronize()
    with cp.cuda.Device(1), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = a * 2
    assert r.device.id == 1 and any(issubclass(x.category, sim.PerformanceWarning) for x in w)


# -- streams -----------------------------------------------------------------------------------------
def test_reading_unsynchronised_work_of_another_stream_is_a_hazard():
    a = cp.ones(4)
    s = cp.cuda.Stream(non_blocking=True)
    with s, pytest.raises(sim.StreamHazardError, match="legacy default stream"):
        a * 3                                # a non-blocking stream does not wait for the legacy one
    cp.cuda.Stream.null.synchronize()
    with s:
        b = a * 3
    with pytest.raises(sim.StreamHazardError, match="read-after-write.*non-blocking stream"):
        b.get()                              # the legacy stream does not wait for s
    s.synchronize()
    np.testing.assert_array_equal(b.get(), [3, 3, 3, 3])


def test_zero_byte_arrays_have_no_hazards():
    """A zero-size array holds no memory: unsynchronised streams touching it cannot race
    (numpy shape semantics create such arrays), while a one-element one still does."""
    a, one = cp.ones((0, 4)), cp.ones(1)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        a[...] = 0                           # the legacy stream wrote it: no hazard, no bytes
        b = a * 3
    with s, pytest.raises(sim.StreamHazardError, match="write-after-write"):
        one[...] = 0
    cp.cuda.Device().synchronize()
    assert b.get().shape == (0, 4)


def test_events_and_blocking_streams_order_work():
    a = cp.ones(4)
    cp.cuda.Device().synchronize()
    s1, s2 = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    with s1:
        b = a + 1
    ev = s1.record()
    s2.wait_event(ev)
    with s2:
        c = b * 2                            # ordered after s1's work by the event
    s2.synchronize()
    np.testing.assert_array_equal(c.get(), [4, 4, 4, 4])
    blocking = cp.cuda.Stream()              # blocking streams sync with the legacy stream
    with blocking:
        d = a * 5
    np.testing.assert_array_equal(d.get(), [5, 5, 5, 5])
    with s1:
        e = a * 7
    with pytest.raises(sim.StreamHazardError, match="write-after-write"):
        with s2:
            e[...] = 0                       # s2 overwrites what s1 wrote, unsynchronised


def test_stream_use_is_per_thread_and_checks_the_device():
    s = cp.cuda.Stream(non_blocking=True)
    s.use()
    assert cp.cuda.get_current_stream() == s
    seen = []
    t = threading.Thread(target=lambda: seen.append(cp.cuda.get_current_stream()))
    t.start()
    t.join()
    assert seen == [cp.cuda.Stream.null]
    with cp.cuda.Device(1):
        assert cp.cuda.get_current_stream() == cp.cuda.Stream.null   # per device
        with pytest.raises(RuntimeError, match=r"created on \(0\) does not match with the current device \(1\)"):
            s.use()
    cp.cuda.Stream.null.use()


def test_hazards_can_be_downgraded_to_warnings():
    sim.reset(num_devices=1, hazards="warn")
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        b = cp.ones(2) * 2
    with pytest.warns(sim.StreamHazardWarning):
        b.get()
    assert sim.stats()["hazards"] == 1


# -- random ---------------------------------------------------------------------------------------
def test_random_state_is_reproducible_accepts_64bit_seeds_and_stays_on_its_device():
    r1 = cp.random.RandomState(2**63 + 5).uniform(size=5)
    r2 = cp.random.RandomState(2**63 + 5).uniform(size=5)
    np.testing.assert_array_equal(r1.get(), r2.get())
    assert r1.dtype == np.float64 and cp.random.RandomState(1).randint(0, 3, 4).dtype == np.int64
    assert cp.random.RandomState(1).normal(size=3, dtype=np.float32).dtype == np.float32
    rs = cp.random.RandomState(3)
    with cp.cuda.Device(1), pytest.raises(RuntimeError, match="created on device 0"):
        rs.uniform(size=2)


def test_requested_devices_parses_the_environment():
    assert sim.requested_devices({}) == 0
    assert sim.requested_devices({"PLEXNET_CUDA_SIMULATE": "off"}) == 0
    assert sim.requested_devices({"PLEXNET_CUDA_SIMULATE": "2"}) == 2
    with pytest.raises(ValueError, match="PLEXNET_CUDA_SIMULATE"):
        sim.requested_devices({"PLEXNET_CUDA_SIMULATE": "many"})
