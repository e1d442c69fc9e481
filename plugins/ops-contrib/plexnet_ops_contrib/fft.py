"""``fft`` / ``ifft`` of the last axis, MXNet's layout: complex values interleaved as
``[re0, im0, re1, im1, ...]``; ``fft`` takes real ``(..., d)`` and gives ``(..., 2d)``,
``ifft`` takes ``(..., 2d)`` and gives the real part ``(..., d)``, unnormalised (as
cuFFT's inverse: ``ifft(fft(x)) == d * x``). MXNet 1.9.1 has them on GPU only; here they
run on every device. 2-D and 4-D inputs, as MXNet; ``compute_size`` (MXNet's batching of
cuFFT plans) is accepted and has no effect on the result."""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field, Params

from ._common import FnProp, register as _register

__all__ = ["register"]


class FFTParam(Params):
    compute_size = Field(int, default=128, low=1, doc="transforms per batch (MXNet's cuFFT batching)")


def _interleave(xp: Any, z: Any) -> Any:
    return xp.stack([z.real, z.imag], axis=-1).reshape(z.shape[:-1] + (2 * z.shape[-1],))


def _complex(x: Any) -> Any:
    return x[..., 0::2] + 1j * x[..., 1::2]


class FFTProp(FnProp):
    """Fourier transform of real data along the last axis (complex output interleaved)."""

    param_cls = FFTParam

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d = shapes[0]
        if len(d) not in (2, 4):
            raise self.error("data must be 2-D or 4-D", shapes)
        return [d[:-1] + (2 * d[-1],)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        return [_interleave(xp, xp.fft.fft(ins[0], axis=-1))]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        # out = F x (F symmetric): d x = Re(conj(F) g) = Re(d * ifft(g)) for g = gr + i gi
        g = _complex(ogs[0])
        d = g.shape[-1]
        return [(xp.fft.ifft(g, axis=-1) * d).real]


class IFFTProp(FnProp):
    """Unnormalised inverse Fourier transform along the last axis; the real part."""

    param_cls = FFTParam

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d = shapes[0]
        if len(d) not in (2, 4) or d[-1] % 2:
            raise self.error("data must be 2-D or 4-D with an even last dimension (interleaved complex)", shapes)
        return [d[:-1] + (d[-1] // 2,)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        z = _complex(ins[0])
        return [(xp.fft.ifft(z, axis=-1) * z.shape[-1]).real]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        # out = Re(conj(F) z); d re = Re(F g), d im = Im(F g)... for real g: F g
        return [_interleave(xp, xp.fft.fft(ogs[0], axis=-1))]


def register(registry: Any) -> None:
    _register(registry, {"fft": FFTProp, "ifft": IFFTProp})
