"""The cycle model of a replica as formula text: :class:`tco.core.serving.steps.CycleModel`'s terms, exact cycle, bound
code, spilled bytes and decode lines, written over cell references (the serving sheet's building blocks).

Each function names the core function it mirrors; a ``Line`` is an ``(intercept, slope)`` pair of formula texts.
"""

from __future__ import annotations

from dataclasses import dataclass

from tco.export import formulas as fx

Line = tuple[str, str]  # (intercept, slope) formula text


def overlapped(x: str, y: str, o: str) -> str:
    """:func:`tco.core.serving.steps.overlapped`: ``max(x, y) + (1 - o) min(x, y)``."""
    return f"(MAX({x},{y})+(1-{o})*MIN({x},{y}))"


def scaled(factor: str, x: str) -> str:
    """``factor x``, or ``x`` itself where the factor is "1" (a pool without speculation keeps its formulas)."""
    return x if factor == "1" else f"{factor}*{x}"


def lines_at(lines: list[Line], batch: str) -> str:
    """``f(B) = max_i (c0_i + c1_i B)``."""
    terms = [f"{c0}+{c1}*{batch}" for c0, c1 in lines]
    return terms[0] if len(terms) == 1 else f"MAX({','.join(terms)})"


def branch_min(values: list[str]) -> str:
    return values[0] if len(values) == 1 else f"MIN({','.join(values)})"


def branch_max(values: list[str]) -> str:
    return values[0] if len(values) == 1 else f"MAX({','.join(values)})"


def tier_time_lines(fixed: str, per_token: str, caps: list[str], bws: list[str], offset: str = "0") -> list[Line]:
    """:func:`tco.core.serving.steps.tier_time_lines`."""
    out = []
    cumulative_bytes, cumulative_s = "0", "0"
    for cap, bw in zip(caps, bws, strict=True):
        out.append((f"(({cumulative_s})+(({fixed})-({cumulative_bytes}))/{bw}-({offset}))", f"(({per_token})/{bw})"))
        cumulative_bytes = f"{cumulative_bytes}+{cap}"
        cumulative_s = f"{cumulative_s}+{cap}/{bw}"
    return out


def phase(memory: list[Line], compute_slope: str, o: str) -> list[Line]:
    """:func:`tco.core.serving.steps._phase`."""
    out = []
    for m0, m1 in memory:
        out += [(m0, f"({m1}+(1-{o})*{compute_slope})"), (f"(1-{o})*{m0}", f"({compute_slope}+(1-{o})*{m1})")]
    return out


def pairs(a: list[Line], b: list[Line], o: str) -> list[Line]:
    """:func:`tco.core.serving.steps._pairs`."""
    out = []
    for a0, a1 in a:
        for b0, b1 in b:
            out += [(f"({a0}+(1-{o})*{b0})", f"({a1}+(1-{o})*{b1})"), (f"({b0}+(1-{o})*{a0})", f"({b1}+(1-{o})*{a1})")]
    return out


@dataclass
class Cycle:
    """A :class:`tco.core.serving.steps.CycleModel` as cell references (static facts as Python values)."""

    pipeline: int
    moe: bool
    weight: str
    read_fixed: str
    read_per_token: str
    flops_per_token: str
    decode_kv: str
    decode_attention: str
    prefill_kv: str
    prefill_attention: str
    flops: str
    caps: list[str]
    bws: list[str]
    s0: str
    s1: str
    o_mc: str
    o_p: str
    o_c: str
    #: the collective time per prompt token, where the device gives prompt tokens their own share of the links
    #: (None: ``s1``, as a decode token's)
    s1_prompt: str | None = None
    #: speculative decoding: token passes per decode sequence ``s = k + 1 + k f`` and weight reads per cycle
    #: ``r = 1 + k f`` (``CycleModel.token_passes``, ``weight_reads``; "1": one token per step)
    token_passes: str = "1"
    weight_reads: str = "1"
    #: micro-batches per stage that each read the weights (2: two-batch overlap; ``CycleModel.micro_batches``)
    micro_batches: int = 1
    #: two-batch overlap: the expert all-to-alls' fixed time [s] and time per token [s/token] beside the phases, and
    #: the share of them hidden under the phases (``CycleModel.expert_*``, the overlap ``1 - expert_keep``; None: no
    #: such overlap, a wide replica of one micro-batch carries them in ``s0``, ``s1``)
    expert_fixed: str = "0"
    expert_per_token: str = "0"
    expert_overlap: str | None = None

    @property
    def passes(self) -> int:
        """:attr:`tco.core.serving.steps.CycleModel.weight_passes`: ``p x micro_batches`` [-]."""
        return self.pipeline * self.micro_batches

    @property
    def full_read(self) -> str:
        return self.weight if self.moe else self.read_fixed

    def t_mem(self, bytes_read: str) -> str:
        return f"({fx.memory_read_time_s(bytes_read, self.caps, self.bws)})"

    def weight_read(self, tokens: str) -> str:
        if not self.moe:
            return self.read_fixed
        return f"MIN({self.read_fixed}+{self.read_per_token}*MAX({tokens},1),{self.weight})"

    def passed(self, decode: str, prefill: str) -> str:
        """:meth:`tco.core.serving.steps.CycleModel.passed_tokens`: ``s B + N_p``."""
        return f"({scaled(self.token_passes, decode)}+{prefill})"

    def expert_comm(self, tokens: str) -> str:
        """:meth:`tco.core.serving.steps.CycleModel.expert_comm_s`: ``fixed + per_token N`` (two-batch overlap)."""
        return f"({self.expert_fixed}+{self.expert_per_token}*{tokens})"

    def terms(self, decode: str, prefill: str) -> tuple[str, str, str, str, str]:
        """:meth:`tco.core.serving.steps.CycleModel._terms` (a two-batch-overlap cycle's all-to-alls apart)."""
        p = self.passes
        tokens = self.passed(decode, prefill)
        weight_memory = scaled(self.weight_reads, f"{p}*{self.t_mem(self.weight_read(f'{tokens}/{p}'))}")
        weight_compute = f"({self.flops_per_token}*{tokens}/{self.flops})"
        kv = f"({decode}*{self.decode_kv}+{prefill}*{self.prefill_kv})"
        kv_memory = f"({self.t_mem(f'{self.weight}+{kv}')}-{self.t_mem(self.weight)})"
        kv_compute = f"(({decode}*{self.decode_attention}+{prefill}*{self.prefill_attention})/{self.flops})"
        per_token = (f"{self.s1}*{tokens}" if self.s1_prompt is None
                     else f"({self.s1}*{scaled(self.token_passes, decode)}+{self.s1_prompt}*{prefill})")
        sync = f"({self.s0}+(1-{self.o_c})*{per_token})"
        return weight_memory, weight_compute, kv_memory, kv_compute, sync

    def cycle(self, decode: str, prefill: str) -> str:
        """:meth:`tco.core.serving.steps.CycleModel.cycle_s` (two-batch overlap: the phases overlapped with the
        all-to-alls)."""
        wm, wc, km, kc, sync = self.terms(decode, prefill)
        phases = overlapped(overlapped(wm, wc, self.o_mc), overlapped(km, kc, self.o_mc), self.o_p)
        if self.expert_overlap is not None:
            phases = overlapped(phases, self.expert_comm(self.passed(decode, prefill)), self.expert_overlap)
        return f"({phases}+{sync})"

    def bound(self, decode: str, prefill: str) -> str:
        """The code of :meth:`tco.core.serving.steps.CycleModel.bound_and_spill` (its ``terms_s``: the overlapped
        all-to-alls counted whole with the collectives)."""
        wm, wc, km, kc, sync = self.terms(decode, prefill)
        if self.expert_overlap is not None:
            sync = f"({sync}+{self.expert_comm(self.passed(decode, prefill))})"
        memory, compute = f"({wm}+{km})", f"({wc}+{kc})"
        return f"(({compute}>{memory})*({compute}>={sync})*1+({sync}>MAX({memory},{compute}))*2)"

    def spill(self, decode: str, prefill: str) -> str:
        """The bytes of :meth:`tco.core.serving.steps.CycleModel.bound_and_spill`."""
        if len(self.caps) == 1:
            return "0"
        p = self.passes
        weights = self.weight_read(f"{self.passed(decode, prefill)}/{p}")
        kv = f"({decode}*{self.decode_kv}+{prefill}*{self.prefill_kv})"
        fast = self.caps[0]
        return f"({scaled(self.weight_reads, f'{p}*MAX({weights}-{fast},0)')}+MAX({kv}-MAX({fast}-{weights},0),0))"

    def decode_branches(self) -> list[list[Line]]:
        """:meth:`tco.core.serving.steps.CycleModel.decode_lines` (one list of lines per weight-read branch)."""
        p, s, r = self.passes, self.token_passes, self.weight_reads
        compute_slope = f"({scaled(s, self.flops_per_token)}/{self.flops})"
        kv_slope = f"({self.decode_attention}/{self.flops})"
        if len(self.caps) == 1:
            attention = [("0", overlapped(f"{self.decode_kv}/{self.bws[0]}", kv_slope, self.o_mc))]
        else:
            kv_memory = tier_time_lines(self.weight, self.decode_kv, self.caps, self.bws, self.t_mem(self.weight))
            attention = phase(kv_memory, kv_slope, self.o_mc)
        branches = [[(scaled(r, f"{p}*{self.t_mem(self.full_read)}"), "0")]]
        if self.moe:
            sparse = tier_time_lines(self.read_fixed, f"{scaled(s, self.read_per_token)}/{p}", self.caps, self.bws)
            branches.append([(scaled(r, f"{p}*{c0}"), scaled(r, f"{p}*{c1}")) for c0, c1 in sparse])
        sync0, sync1 = self.s0, scaled(s, f"(1-{self.o_c})*{self.s1}")
        comm = [(self.expert_fixed, scaled(s, self.expert_per_token))]
        out = []
        for memory in branches:
            phases = pairs(phase(memory, compute_slope, self.o_mc), attention, self.o_p)
            if self.expert_overlap is not None:  # two-batch overlap: the all-to-alls under the phases
                phases = pairs(phases, comm, self.expert_overlap)
            out.append([(f"{c0}+{sync0}", f"{c1}+{sync1}") for c0, c1 in phases])
        return out
