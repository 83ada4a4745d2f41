"""Picking an option in a Dash 4 dropdown from a browser test, the same way on a busy machine as on an idle one."""

from __future__ import annotations

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect


def choose(page, ident: str, label: str, search: str = "", attempts: int = 3) -> None:
    """Open the dropdown ``#ident``, type ``search`` (if any) into its own search box and click the option ``label``.

    Two things make the naive click-type-click flaky under load, as CI showed on the break-even tab:

    - keys typed at the page land wherever focus is, and Dash 4 first focuses the checked option, moving keys to the
      search box only later: so the text is filled into the search box itself;
    - a click that lands while the page is still rendering may leave the list closed: so the click is repeated until
      the list (a dialog) is shown, up to ``attempts`` times.
    """
    trigger = page.locator(f"#{ident}")
    expect(trigger).to_be_visible(timeout=30000)
    choices = page.get_by_role("dialog")
    for attempt in range(attempts):
        trigger.click()
        try:
            choices.wait_for(state="visible", timeout=5000)
            break
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
    if search:
        choices.get_by_role("searchbox").fill(search)
    choices.get_by_text(label, exact=True).click()
