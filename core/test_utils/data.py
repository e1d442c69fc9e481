"""Random data, data sets on local disk, environment and process helpers of
``mx.test_utils``.

plexnet never downloads: ``download`` returns a file that is already where MXNet would
put it and otherwise raises ``FileNotFoundError`` naming the URL and the path to place
it at; the ``get_mnist*``/``get_cifar10`` helpers read those local files.
"""
from __future__ import annotations

import gzip
import os
import platform
import struct
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from ..context import Context, num_gpus
from ..io import DataIter
from ..ndarray import NDArray, array, waitall
from .compare import default_dtype
from ..util import getenv, setenv  # MXNet's test_utils re-exports them

__all__ = ["random_arrays", "random_uniform_arrays", "random_sample", "rand_shape_2d",
           "rand_shape_3d", "rand_shape_nd", "rand_coord_2d", "create_2d_tensor", "create_vector",
           "get_identity_mat", "get_identity_mat_batch", "assign_each", "assign_each2", "list_gpus",
           "get_cuda_compute_capability", "download", "download_model", "get_mnist", "get_mnist_pkl",
           "get_mnist_ubyte", "get_cifar10", "get_mnist_iterator", "get_zip_data", "get_bz2_data",
           "get_im2rec_path", "discard_stderr", "DummyIter", "environment", "setenv", "getenv", "retry",
           "is_cd_run", "is_aarch64_run", "has_tvm_ops", "is_op_runnable", "new_matrix_with_real_eigvals_2d",
           "new_matrix_with_real_eigvals_nd", "new_orthonormal_matrix_2d", "new_sym_matrix_with_real_eigvals_2d",
           "new_sym_matrix_with_real_eigvals_nd", "array"]

rnd = np.random


# -- random data --------------------------------------------------------------------------------

def random_arrays(*shapes: Any) -> Any:
    """Standard normal float32 numpy arrays of the given shapes (one array for one shape)."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes: Any, **kwargs: Any) -> list[np.ndarray]:
    low = kwargs.pop("low", 0.0)
    high = kwargs.pop("high", 1.0)
    dtype = kwargs.pop("dtype", default_dtype())
    if kwargs:
        raise TypeError("Got unexpected argument/s : " + str(list(kwargs)))
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population: list, k: int) -> list:
    """``k`` distinct elements of ``population`` in random order."""
    if not 0 <= k <= len(population):
        raise ValueError(f"random_sample: k={k} out of range for {len(population)} elements")
    pop = list(population)
    np.random.shuffle(pop)
    return pop[:k]


def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple[int, int]:
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1)


def rand_shape_3d(dim0: int = 10, dim1: int = 10, dim2: int = 10, allow_zero_size: bool = False) -> tuple:
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1), rnd.randint(low, dim2 + 1)


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple:
    low = 0 if allow_zero_size else 1
    return tuple(rnd.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low: int, x_high: int, y_low: int, y_high: int) -> tuple:
    return np.random.randint(x_low, x_high, dtype=np.int64), np.random.randint(y_low, y_high, dtype=np.int64)


def create_2d_tensor(rows: int, columns: int, dtype: Any = np.int64) -> NDArray:
    """Row ``i`` filled with ``i``."""
    return array(np.repeat(np.arange(rows).reshape(rows, 1), columns, axis=1), dtype=dtype)


def create_vector(size: int, dtype: Any = np.int64) -> NDArray:
    return array(np.arange(size), dtype=dtype)


def get_identity_mat(size: int) -> NDArray:
    return array(np.identity(size))


def get_identity_mat_batch(size: int) -> NDArray:
    return array(np.array([np.identity(size), np.identity(size)]))


def assign_each(the_input: np.ndarray, function: Callable | None) -> np.ndarray:
    """``function`` applied to every element (vectorised)."""
    return np.vectorize(function)(the_input) if function is not None else np.array(the_input)


def assign_each2(input1: np.ndarray, input2: np.ndarray, function: Callable | None) -> np.ndarray:
    return np.vectorize(function)(input1, input2) if function is not None else np.array(input1)


def new_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """An ``n x n`` matrix with real eigenvalues: ``Q D Q^-1`` with ``D`` diagonal."""
    shape = (n, n)
    q = np.random.normal(size=shape)
    while abs(np.linalg.det(q)) < 1e-2:
        q = np.random.normal(size=shape)
    d = np.diag(np.random.normal(size=n))
    return q @ d @ np.linalg.inv(q)


def new_matrix_with_real_eigvals_nd(shape: tuple) -> np.ndarray:
    n = int(np.prod(shape[:-2]))
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


def new_orthonormal_matrix_2d(n: int) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.normal(size=(n, n)))
    return q


def new_sym_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    q = new_orthonormal_matrix_2d(n)
    return q @ np.diag(np.random.normal(size=n)) @ q.T


def new_sym_matrix_with_real_eigvals_nd(shape: tuple) -> np.ndarray:
    n = int(np.prod(shape[:-2]))
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


# -- devices and platform ---------------------------------------------------------------------------

def list_gpus() -> range:
    """``range`` over the GPU ids this process sees (empty without a GPU backend)."""
    return range(num_gpus())


def get_cuda_compute_capability(ctx: Context) -> int:
    """``major * 10 + minor`` of ``ctx``'s GPU (through the CuPy backend)."""
    if ctx.device_type != "gpu":
        raise ValueError("Expecting a gpu context to get cuda compute capability, "
                         f"while received ctx {ctx}")
    from ..backends import get_backend
    xp = get_backend(ctx).xp
    return int(xp.cuda.Device(ctx.device_id).compute_capability)


def is_cd_run() -> bool:
    return os.environ.get("CD_JOB", "0") == "1"


def is_aarch64_run() -> bool:
    return platform.machine() == "aarch64"


def has_tvm_ops() -> bool:
    """plexnet has no TVM-compiled operators."""
    return False


def is_op_runnable() -> bool:
    """Operators always run here (MXNet: False for TVM ops on old GPUs)."""
    return True


@contextmanager
def environment(*args: Any) -> Iterator[None]:
    """``with environment('NAME', 'value'):`` or ``with environment({...}):`` sets
    variables (``None`` unsets) for the block and restores them after (waiting for pushed
    work first, as MXNet)."""
    if len(args) == 1 and isinstance(args[0], dict):
        env_vars = args[0]
    elif len(args) == 2:
        env_vars = {args[0]: args[1]}
    else:
        raise TypeError("environment: expecting one dict or two args: env var name and value")
    snapshot = {k: os.environ.get(k) for k in env_vars}
    for k, v in env_vars.items():
        setenv(k, v)
    try:
        yield
    finally:
        waitall()
        for k, v in snapshot.items():
            setenv(k, v)


def retry(n: int) -> Callable:
    """Decorator: run a (flaky, random) test up to ``n`` times until it passes."""
    if n <= 0:
        raise ValueError("retry: n must be positive")

    def decorate(f: Callable) -> Callable:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            err: Exception | None = None
            for _ in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError as e:
                    err = e
            assert err is not None
            raise err
        wrapper.__name__ = f.__name__
        wrapper.__doc__ = f.__doc__
        return wrapper
    return decorate


@contextmanager
def discard_stderr() -> Iterator[None]:
    """Silence stderr in the block: file descriptor 2 (native code writes there too) and
    the descriptor behind ``sys.stderr`` where that is another one."""
    with open(os.devnull, "w") as bit_bucket:
        fds = {2}
        try:
            fds.add(sys.stderr.fileno())
        except (AttributeError, OSError, ValueError):  # a replaced (captured) sys.stderr
            pass
        sys.stderr.flush()
        saved = {fd: os.dup(fd) for fd in fds}
        try:
            for fd in fds:
                os.dup2(bit_bucket.fileno(), fd)
            yield
        finally:
            sys.stderr.flush()
            for fd, old in saved.items():
                os.dup2(old, fd)
                os.close(old)


# -- data sets on local disk --------------------------------------------------------------------------

def download(url: str, fname: str | None = None, dirname: str | None = None, overwrite: bool = False,
             retries: int = 5) -> str:
    """The local file MXNet's ``download`` would write (``fname``, or the URL's last part,
    under ``dirname``). plexnet does not download: a missing file raises
    ``FileNotFoundError`` saying where to put it."""
    if fname is None:
        fname = url.split("/")[-1]
    if dirname is not None:
        fname = os.path.join(dirname, fname)
    if os.path.exists(fname) and not overwrite:
        return fname
    raise FileNotFoundError(f"plexnet does not download data: fetch {url} yourself and place it at "
                            f"{os.path.abspath(fname)}")


def download_model(model_name: str, dst_dir: str = "./", meta_info: dict | None = None) -> tuple:
    """``(prefix, epoch)`` of a model whose ``<name>-symbol.json`` and
    ``<name>-0000.params`` are already in ``dst_dir`` (``(None, 0)`` for an unknown name
    when ``meta_info`` is given)."""
    if meta_info is not None and model_name not in meta_info:
        return None, 0
    prefix = os.path.join(dst_dir, model_name)
    for suffix in ("-symbol.json", "-0000.params"):
        if not os.path.exists(prefix + suffix):
            raise FileNotFoundError(f"plexnet does not download models: place {model_name}{suffix} at "
                                    f"{os.path.abspath(prefix + suffix)}")
    return prefix, 0


def _mnist_dir() -> str:
    return os.environ.get("PLEXNET_MNIST_DIR", ".")


def _read_idx(path: str, n_header: int) -> tuple[tuple, bytes]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        head = struct.unpack(">" + "I" * n_header, f.read(4 * n_header))
        return head, f.read()


def _find(dirname: str, names: tuple[str, ...]) -> str:
    for n in names:
        p = os.path.join(dirname, n)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(f"MNIST file not found: expected {os.path.abspath(os.path.join(dirname, names[0]))} "
                            f"(or {names[1]}); plexnet does not download data (set PLEXNET_MNIST_DIR to the folder "
                            f"holding the files)")


def get_mnist() -> dict[str, np.ndarray]:
    """MNIST as numpy arrays (images ``(N, 1, 28, 28)`` float32 in [0, 1], labels int8)
    from ``train-images-idx3-ubyte[.gz]`` ... in ``$PLEXNET_MNIST_DIR`` (default: the
    current folder, where MXNet's ``get_mnist`` downloads them)."""
    d = _mnist_dir()

    def read(lbl: str, img: str) -> tuple[np.ndarray, np.ndarray]:
        _, raw = _read_idx(_find(d, (lbl + ".gz", lbl)), 2)
        label = np.frombuffer(raw, dtype=np.int8)
        (_, _, rows, cols), raw = _read_idx(_find(d, (img + ".gz", img)), 4)
        image = np.frombuffer(raw, dtype=np.uint8).reshape(len(label), rows, cols)
        return label, image.reshape(image.shape[0], 1, rows, cols).astype(np.float32) / 255

    train_lbl, train_img = read("train-labels-idx1-ubyte", "train-images-idx3-ubyte")
    test_lbl, test_img = read("t10k-labels-idx1-ubyte", "t10k-images-idx3-ubyte")
    return {"train_data": train_img, "train_label": train_lbl, "test_data": test_img, "test_label": test_lbl}


_UBYTE = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


def get_mnist_ubyte() -> None:
    """Check that ``data/{train,t10k}-{images-idx3,labels-idx1}-ubyte`` exist (MXNet
    downloads and unzips them there)."""
    missing = [os.path.join("data", n) for n in _UBYTE if not os.path.exists(os.path.join("data", n))]
    if missing:
        raise FileNotFoundError(f"MNIST files not found: {', '.join(os.path.abspath(m) for m in missing)}; plexnet "
                                f"does not download data (unzip http://data.mxnet.io/mxnet/data/mnist.zip into "
                                f"{os.path.abspath('data')})")


def get_mnist_pkl() -> None:
    """Check that ``data/mnist.pkl.gz`` exists."""
    download("http://deeplearning.net/data/mnist/mnist.pkl.gz", dirname="data")


def get_cifar10() -> None:
    """Check that ``data/cifar/{train,test}.{rec,lst}`` exist."""
    names = [os.path.join("data", "cifar", n) for n in ("train.rec", "test.rec", "train.lst", "test.lst")]
    missing = [n for n in names if not os.path.exists(n)]
    if missing:
        raise FileNotFoundError(f"CIFAR-10 files not found: {', '.join(os.path.abspath(m) for m in missing)}; "
                                f"plexnet does not download data (unzip "
                                f"http://data.mxnet.io/mxnet/data/cifar10.zip into {os.path.abspath('data')})")


def get_mnist_iterator(batch_size: int, input_shape: tuple, num_parts: int = 1, part_index: int = 0) -> tuple:
    """``(train, val)`` ``MNISTIter``s over the files of ``get_mnist_ubyte``."""
    from ..io import MNISTIter
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    common = dict(input_shape=input_shape, batch_size=batch_size, flat=flat, num_parts=num_parts,
                  part_index=part_index)
    train = MNISTIter(image="data/train-images-idx3-ubyte", label="data/train-labels-idx1-ubyte", shuffle=True,
                      **common)
    val = MNISTIter(image="data/t10k-images-idx3-ubyte", label="data/t10k-labels-idx1-ubyte", **common)
    return train, val


def get_zip_data(data_dir: str, url: str, data_origin_name: str) -> None:
    """Extract ``data_dir/data_origin_name`` (a zip already there) into ``data_dir``."""
    import zipfile
    path = download(url, fname=data_origin_name, dirname=data_dir)
    with zipfile.ZipFile(path) as zf:
        zf.extractall(path=data_dir)


def get_bz2_data(data_dir: str, data_name: str, url: str, data_origin_name: str) -> None:
    """Decompress ``data_dir/data_origin_name`` (bz2, already there) to ``data_name``."""
    import bz2
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    src = download(url, fname=data_origin_name, dirname=data_dir)
    with bz2.BZ2File(src, "rb") as fin, open(target, "wb") as fout:
        for line in fin:
            fout.write(line)


def get_im2rec_path(home_env: str = "MXNET_HOME") -> str:
    """Path of ``tools/im2rec.py`` under ``$MXNET_HOME``, else plexnet's own ``plexnet/tools/im2rec.py``."""
    base = os.environ.get(home_env, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for p in (os.path.join(base, "tools", "im2rec.py"), os.path.join(base, "..", "..", "tools", "im2rec.py")):
        if os.path.isfile(p):
            return p
    raise OSError("Could not find path to tools/im2rec.py")


class DummyIter(DataIter):
    """An iterator that returns the first batch of ``real_iter`` forever (for speed
    tests without I/O)."""

    def __init__(self, real_iter: Any) -> None:
        super().__init__(real_iter.batch_size)
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.the_batch = next(real_iter)

    def __iter__(self) -> "DummyIter":
        return self

    def next(self) -> Any:
        return self.the_batch

    __next__ = next
