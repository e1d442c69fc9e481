"""Gluon helpers (MXNet 1.x ``gluon.utils``): splitting batches across devices,
global-norm gradient clipping, file checks and download."""
from __future__ import annotations

import hashlib
import itertools
import math
import os
import uuid
import warnings
from typing import Any, Sequence


from .. import ndarray
from ..base import PlexnetError
from ..ndarray import NDArray
from .block import HookHandle
from .parameter import brief_print_list as _brief_print_list  # noqa: F401  (MXNet's private helper)

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download", "replace_file",
           "shape_is_known", "HookHandle"]


def split_data(data: NDArray, num_slice: int, batch_axis: int = 0, even_split: bool = True) -> list[NDArray]:
    """Split ``data`` into ``num_slice`` slices along ``batch_axis``."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(f"data with shape {data.shape} cannot be evenly split into {num_slice} slices along axis "
                         f"{batch_axis}. Use a batch size that's multiple of {num_slice} or set even_split=False to "
                         f"allow uneven partitioning of data.")
    # MXNet 1.9.1's sections: the first ``size % num_slice`` slices take one more example
    # (numpy's array_split); fewer examples than slices leave the last ones empty
    n_each, extras = divmod(size, num_slice)
    bounds = list(itertools.accumulate([0] + extras * [n_each + 1] + (num_slice - extras) * [n_each]))
    if batch_axis == 0:
        slices = [data[bounds[i]:bounds[i + 1]] for i in range(num_slice)]
    elif even_split:
        slices = ndarray.op_function("split")(data, num_outputs=num_slice, axis=batch_axis)  # type: ignore[misc]
        slices = slices if isinstance(slices, list) else [slices]
    else:
        slices = [data.slice_axis(batch_axis, bounds[i], bounds[i + 1]) for i in range(num_slice)]
    return slices


def split_and_load(data: Any, ctx_list: Sequence[Any], batch_axis: int = 0, even_split: bool = True) -> list[NDArray]:
    """Split ``data`` and put one slice on each context of ``ctx_list``."""
    if not isinstance(data, NDArray):
        data = ndarray.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [i.as_in_context(ctx) for i, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays: Sequence[NDArray], max_norm: float, check_isfinite: bool = True) -> Any:
    """Scale ``arrays`` in place so that the 2-norm of all of them together is at
    most ``max_norm``; returns that norm (a float; an NDArray with
    ``check_isfinite=False``, which avoids waiting)."""
    if not arrays:
        raise ValueError("clip_global_norm: no arrays given")
    ctx = arrays[0].context
    total = ndarray.op_function("add_n")(*[(ndarray.op_function("norm")(x) ** 2).as_in_context(ctx)  # type: ignore
                                            for x in arrays])
    total_norm = ndarray.op_function("sqrt")(total)  # type: ignore[misc]
    if check_isfinite:
        value = float(total_norm.asscalar())
        if not math.isfinite(value):
            warnings.warn(UserWarning("nan or inf is detected. Clipping results will be undefined."),
                          stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = ndarray.op_function("_minimum_scalar")(scale, scalar=1.0)  # type: ignore[misc]
    for arr in arrays:
        arr *= scale.as_in_context(arr.context)
    return value if check_isfinite else total_norm


def check_sha1(filename: str, sha1_hash: str) -> bool:
    """Whether the file's SHA-1 equals ``sha1_hash``."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        while True:
            data = f.read(1048576)
            if not data:
                break
            sha1.update(data)
    return sha1.hexdigest() == sha1_hash


def replace_file(src: str, dst: str) -> None:
    """Atomically move ``src`` onto ``dst``."""
    os.replace(src, dst)


def shape_is_known(shape: Any) -> bool:
    """Whether every dimension of ``shape`` is known (MXNet 1.x: 0 is unknown)."""
    if shape is None:
        return False
    return all(int(d) > 0 for d in shape)


def _fetch(url: str, dest: str, verify_ssl: bool, timeout: float) -> None:
    """Write ``url``'s content to ``dest``: through ``requests`` when installed (as MXNet,
    whose scripts and tests patch ``requests.get``), else ``urllib``."""
    try:
        import requests as _requests
    except ImportError:
        _requests = None  # type: ignore[assignment]
    if _requests is not None:
        r = _requests.get(url, stream=True, verify=verify_ssl, timeout=timeout)
        if r.status_code != 200:
            raise RuntimeError(f"Failed downloading url {url}")
        with open(dest, "wb") as f:
            for chunk in r.iter_content(chunk_size=1 << 16):
                if chunk:
                    f.write(chunk)
        return
    import ssl
    import urllib.request
    ctx = None if verify_ssl else ssl._create_unverified_context()  # noqa: S323 - the caller asked
    with urllib.request.urlopen(url, timeout=timeout, context=ctx) as r, open(dest, "wb") as f:  # noqa: S310
        while True:
            chunk = r.read(1 << 20)
            if not chunk:
                break
            f.write(chunk)


def download(url: str, path: str | None = None, overwrite: bool = False, sha1_hash: str | None = None,
             retries: int = 5, verify_ssl: bool = True, timeout: float = 30.0) -> str:
    """Download ``url`` to ``path`` (a file or directory) and return the file name.
    An existing file with the right SHA-1 is reused without any network access; when
    the network cannot be reached the error names the URL and where to put the file
    by hand."""
    fname = url.split("/")[-1] if path is None else (
        os.path.join(os.path.expanduser(path), url.split("/")[-1]) if os.path.isdir(os.path.expanduser(path))
        else os.path.expanduser(path))
    if fname == "" or fname.endswith("/"):
        raise ValueError(f"download: cannot derive a file name from {url!r}; give path=")
    if not verify_ssl:
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). "
                      "Adding certificate verification is strongly advised.", stacklevel=2)
    if not overwrite and os.path.exists(fname) and (not sha1_hash or check_sha1(fname, sha1_hash)):
        return fname
    dirname = os.path.dirname(os.path.abspath(os.path.expanduser(fname)))
    os.makedirs(dirname, exist_ok=True)
    last: Exception | None = None
    for _ in range(max(1, retries)):
        tmp = f"{fname}.{uuid.uuid4()}"
        try:
            _fetch(url, tmp, verify_ssl, timeout)
            if sha1_hash and not check_sha1(tmp, sha1_hash):
                os.remove(tmp)
                raise PlexnetError(f"download: file from {url} does not match the expected SHA-1 {sha1_hash}")
            replace_file(tmp, fname)
            return fname
        except PlexnetError:
            raise
        except Exception as e:  # noqa: BLE001 - network errors of urllib or requests: retried
            last = e
            if os.path.exists(tmp):
                os.remove(tmp)
    raise PlexnetError(f"download: cannot fetch {url} ({last}); there may be no network access here. Download it "
                       f"elsewhere and place it at {os.path.abspath(fname)}"
                       + (f" (SHA-1 {sha1_hash})" if sha1_hash else ""))


