"""Which named values a computation reads: a mapping that notes each name looked up in it.

An option's result is a function of the values it reads (:func:`tco.core.evaluate.option_reads`), so where a sweep
moves none of them the option's result is its result at the base values, without evaluating it there again
(:class:`tco.analysis.evaluation.MovedCostFigures`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping


class ReadLog(Mapping):
    """``values`` as a read-only mapping that adds each name read (``log[name]``, ``log.get(name)``) to ``names``.

    Iterating over the names or asking whether one is present (``name in log``) reads no value, so it is not noted:
    which names a scenario has is its structure, which no sweep moves.
    """

    def __init__(self, values: Mapping[str, object]):
        self._values = values
        self.names: set[str] = set()

    def __getitem__(self, name: str) -> object:
        value = self._values[name]
        self.names.add(name)
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)
