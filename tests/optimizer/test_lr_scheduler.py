import math

import pytest

from plexnet import lr_scheduler as lrs

pytestmark = pytest.mark.timeout(60)


def test_factor_scheduler_steps_and_floor():
    s = lrs.FactorScheduler(step=10, factor=0.5, stop_factor_lr=0.1, base_lr=1.0)
    assert s(1) == 1.0 and s(10) == 1.0
    assert s(11) == 0.5 and s(20) == 0.5 and s(21) == 0.25
    assert s(100) == 0.1  # floored at stop_factor_lr


def test_factor_scheduler_warmup_linear_and_constant():
    s = lrs.FactorScheduler(step=100, factor=0.9, base_lr=1.0, warmup_steps=10, warmup_begin_lr=0.0)
    assert s(0) == 0.0 and s(5) == pytest.approx(0.5) and s(10) == 1.0
    c = lrs.FactorScheduler(step=100, base_lr=1.0, warmup_steps=4, warmup_begin_lr=0.2, warmup_mode="constant")
    assert c(3) == 0.2 and c(4) == 1.0


def test_multifactor_scheduler():
    s = lrs.MultiFactorScheduler(step=[5, 10], factor=0.1, base_lr=1.0)
    assert s(5) == 1.0
    assert s(6) == pytest.approx(0.1)
    assert s(11) == pytest.approx(0.01)
    assert s(1000) == pytest.approx(0.01)
    with pytest.raises(ValueError):
        lrs.MultiFactorScheduler(step=[5, 5])


def test_poly_scheduler_closed_form():
    s = lrs.PolyScheduler(max_update=100, base_lr=1.0, pwr=2, final_lr=0.1)
    for n in (0, 10, 50, 100):
        assert s(n) == pytest.approx(0.1 + 0.9 * (1 - n / 100) ** 2)
    assert s(200) == pytest.approx(0.1)


def test_cosine_scheduler_with_warmup():
    s = lrs.CosineScheduler(max_update=110, base_lr=2.0, final_lr=0.0, warmup_steps=10, warmup_begin_lr=0.0)
    assert s(5) == pytest.approx(1.0)
    for n in (10, 60, 110):
        assert s(n) == pytest.approx(2.0 * (1 + math.cos(math.pi * (n - 10) / 100)) / 2)


def test_invalid_arguments():
    with pytest.raises(ValueError):
        lrs.FactorScheduler(step=0)
    with pytest.raises(ValueError):
        lrs.FactorScheduler(step=1, factor=2)
    with pytest.raises(ValueError):
        lrs.LRScheduler(base_lr=0.1, warmup_begin_lr=0.5)
    with pytest.raises(ValueError):
        lrs.LRScheduler(warmup_mode="cubic")


def test_config_roundtrip_keeps_progress():
    s = lrs.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    s(7)
    t = lrs.from_config(s.get_config())
    assert type(t) is lrs.FactorScheduler and t.count == s.count and t(7) == s(7) and t(9) == s(9)
    with pytest.raises(ValueError):
        lrs.from_config({"type": "os.system", "attrs": {}})
