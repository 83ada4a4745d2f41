"""What a scenario may name that tco reads from elsewhere: the trust boundary of its references.

Two fields of a scenario name another scenario, which tco then reads: a training scenario's
``serving.scenario`` (the fleet its model serves: siting, second life, the Fleet tab) and
``fleet_dynamics.tree.training_scenario`` (the specialization tree's training leaf). A
:class:`References` policy says what they may name, and every scenario carries the one it was read
under (:attr:`tco.inputs.scenario.ScenarioEdits.references`), so a derived or edited scenario keeps it:

- :data:`FILES` (the command line and the Python API): a bundled scenario by name or any file path,
  the user's own files on the user's own machine;
- :data:`APP_REFERENCES` (an upload, a shared link or a crafted request to the app): a bundled
  scenario by name only, or a file uploaded in the same session (``uploads``), never a path on the
  server (``/etc/passwd``, ``/proc/self/environ``, ``../../key.pem``, even an existing bundled file given
  by its path).

The fields are checked when the scenario is read (:func:`tco.inputs.loading.scenario_from_dict`), so a
refused name never reaches a view, and again when the named scenario is loaded
(:func:`tco.inputs.loading.load_reference`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tco.foundation.errors import FieldError

#: the bundled scenarios (``scenarios/<name>.yaml``)
SCENARIOS_DIR = Path(__file__).resolve().parents[2] / "scenarios"


def bundled_names() -> list[str]:
    """The names of the bundled scenarios.

    Returns
    -------
    list of str
        ``default``, ``training-run``, ... (sorted).
    """
    return sorted(p.stem for p in SCENARIOS_DIR.glob("*.yaml"))


@dataclass(frozen=True)
class References:
    """What a scenario's references may name: file paths (``paths``), or only bundled names and the files
    ``uploads`` holds (``(name, YAML text)`` pairs uploaded in the same session)."""

    paths: bool = True
    uploads: tuple[tuple[str, str], ...] = ()

    def upload(self, name: str) -> str | None:
        """The text of the upload called ``name``, or None.

        Parameters
        ----------
        name : str
            The name a reference gives.

        Returns
        -------
        str or None
            The uploaded YAML text.
        """
        return next((text for key, text in self.uploads if key == name), None)

    def check(self, field: str, ref: object) -> FieldError | None:
        """The broken rule of a reference ``ref`` in ``field``, or None when the policy allows it.

        Parameters
        ----------
        field : str
            The field path (``serving.scenario``).
        ref : object
            What the field names.

        Returns
        -------
        FieldError or None
            The refusal, naming the field, the value and what may be named.
        """
        if not isinstance(ref, str) or not ref.strip():
            return FieldError(field, ref, "must name a scenario")
        if self.paths:
            return None
        names = bundled_names()
        if ref in names or self.upload(ref) is not None:
            return None
        uploaded = f" or a file uploaded in this session ({', '.join(k for k, _ in self.uploads)})" if self.uploads else ""
        return FieldError(field, ref, f"an uploaded or linked scenario may name a bundled scenario by name "
                                      f"({', '.join(names)}){uploaded}, never a file on the server")


#: the command line and the API: bundled names or the user's own files
FILES = References()
#: the app: bundled names only (a session's uploads are added by the app per request)
APP_REFERENCES = References(paths=False)
