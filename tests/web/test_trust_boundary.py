"""The app's trust boundary against the running server and in Chromium (issue 50, item 1): an uploaded scenario
naming a server file is refused where the upload was, the views keep working, nothing of the file reaches the
page or the server log; a request with another site's Host name is refused."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

from playwright.sync_api import expect

from tco.inputs.loading import SCENARIOS_DIR


def get(url: str, host: str) -> tuple[int, str]:
    """``GET /`` on the live server with ``Host: host`` (what a DNS-rebinding page's requests carry)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("GET", "/", headers={"Host": host})
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        connection.close()


def test_the_running_server_answers_its_own_host_names_only(live_app):
    url, log = live_app
    port = urlsplit(url).port
    assert get(url, f"127.0.0.1:{port}")[0] == 200
    assert get(url, f"localhost:{port}")[0] == 200
    status, text = get(url, f"attacker.example:{port}")
    assert status == 400 and "--allowed-host" in text
    assert log.records == []


def test_an_upload_naming_a_server_file_is_refused_in_the_browser(page, live_app):
    url, log = live_app
    text = (SCENARIOS_DIR / "training-run.yaml").read_text().replace("serving: {scenario: default, site: metro}",
                                                                      "serving: {scenario: /etc/passwd, site: metro}")
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url + "/")
    expect(page.locator("#verdict")).not_to_be_empty(timeout=15000)
    verdict = page.locator("#verdict").inner_text()
    page.set_input_files("#upload input[type=file]", files=[{"name": "training-run.yaml", "mimeType": "application/x-yaml",
                                                            "buffer": text.encode()}])
    messages = page.locator("#messages")
    expect(messages).to_contain_text("serving.scenario", timeout=15000)
    expect(messages).to_contain_text("never a file on the server")
    for tab in ("compare", "lifecycle", "fleet"):
        page.click(f"#tab-{tab}")
        page.wait_for_timeout(500)
    page.click("#tab-compare")
    expect(page.locator("#verdict")).not_to_be_empty()
    assert page.locator("#verdict").inner_text() == verdict  # still the default scenario's
    assert "root:x:0:0" not in page.content()  # /etc/passwd's first line
    assert errors == [] and log.records == []
