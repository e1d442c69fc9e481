"""MXNet 1.9.1's gluon.utils.download goes through ``requests`` (MXNet's test_gluon_utils.py
patches ``requests.get``); found by running that file. No network is used here."""
import io
import os
import warnings
from unittest import mock

import pytest

import plexnet as mx

requests = pytest.importorskip("requests")


class _Response(requests.Response):
    def __init__(self, status_code, content):
        super().__init__()
        self.status_code = status_code
        self.raw = io.BytesIO(content)


def test_download_uses_requests(tmp_path):
    seen = {}

    def fake_get(url, **kw):
        seen.update(kw, url=url)
        return _Response(200, b"MOCK CONTENT" * 100)

    with mock.patch("requests.get", side_effect=fake_get):
        out = mx.gluon.utils.download("https://example.invalid/README.md", path=str(tmp_path))
    assert out == os.path.join(str(tmp_path), "README.md")
    assert open(out, "rb").read() == b"MOCK CONTENT" * 100
    assert seen["url"] == "https://example.invalid/README.md" and seen["stream"] is True and seen["verify"] is True
    assert sorted(os.listdir(tmp_path)) == ["README.md"]           # no temporary file left


def test_download_verify_ssl_false_warns_and_is_passed_on(tmp_path):
    with mock.patch("requests.get", return_value=_Response(200, b"x")) as get, \
            warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mx.gluon.utils.download("https://example.invalid/a.html", path=str(tmp_path / "a.html"), verify_ssl=False)
    assert get.call_args.kwargs["verify"] is False
    assert any(str(x.message).startswith("Unverified HTTPS request") for x in w)


def test_download_http_error_and_connection_error_fail(tmp_path):
    with mock.patch("requests.get", return_value=_Response(404, b"")):
        with pytest.raises(mx.PlexnetError, match="cannot fetch"):
            mx.gluon.utils.download("https://example.invalid/b", path=str(tmp_path / "b"), retries=2)
    with mock.patch("requests.get", side_effect=requests.exceptions.ConnectionError):
        with pytest.raises(mx.PlexnetError, match="place it at"):
            mx.gluon.utils.download("https://example.invalid/c", path=str(tmp_path / "c"), retries=1)
    assert os.listdir(tmp_path) == []
