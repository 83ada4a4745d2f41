"""Discrete-event simulation of a serving fleet, cycle by cycle (simpy), to check the closed forms.

The closed-form model (:mod:`tco.core.serving`) replaces the fleet by averages: a fluid
prefill share per cycle, square-root staffing for the waits, a percentile occupancy.
This simulation runs the fleet the model sized, request by request and cycle by cycle,
with the same hardware cost of a cycle (:meth:`tco.core.steps.CycleModel.cycle_s` at the
cycle's actual decode and prefill token counts) and nothing averaged:

* Poisson arrivals at the peak rate into one admission queue (first come, first
  served); a replica admits the head of the queue at a cycle boundary whenever it has a
  free slot (at most ``slots`` sequences in flight, prefilling or decoding);
* ``chunked``: each cycle carries every decoding sequence's next token, then prefill
  chunks, oldest prompt first, up to the token budget (vLLM V1's scheduler);
  ``prefill_first``: while prompts wait, a cycle runs up to ``k_b`` whole prompts and no
  decode (vLLM V0);
* the first output token comes with the end of the prompt's last prefill chunk; the other
  ``O - 1`` one per cycle;
* disaggregated: prefill replicas run up to ``k_b`` whole prompts per pass, the KV cache
  then moves for ``kv_transfer_s``, and the request waits for a slot of the decode pool
  (its wait counts in TPOT, as MLPerf's per-request TPOT does).

Only replicas with one pipeline stage are simulated (a pipelined replica's micro-batches
would need a stage-level simulation); the tests pick shapes accordingly.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass

import numpy as np
import simpy


@dataclass
class Request:
    arrival: float
    prompt_left: float
    first_token: float = math.nan
    done: float = math.nan


class _Cycle:
    """Memoized scalar cycle time of a replica [s]."""

    def __init__(self, cycle_model):
        self.cm = cycle_model
        self.memo: dict[tuple[float, float], float] = {}

    def __call__(self, decode_tokens: float, prefill_tokens: float) -> float:
        key = (decode_tokens, prefill_tokens)
        if key not in self.memo:
            self.memo[key] = float(np.asarray(self.cm.cycle_s(float(decode_tokens), float(prefill_tokens))).reshape(-1)[0])
        return self.memo[key]


class _Replica:
    """State of one replica: sequences decoding, prompts being prefilled (oldest first)."""

    def __init__(self, env, slots: int):
        self.env, self.slots = env, slots
        self.decoding = 0
        self.prefilling: collections.deque = collections.deque()
        self.pending_tokens = 0.0
        self.wake = env.event()

    @property
    def busy(self) -> int:
        return self.decoding + len(self.prefilling)

    def assign(self, request: Request) -> None:
        self.prefilling.append(request)
        self.pending_tokens += request.prompt_left
        if not self.wake.triggered:
            self.wake.succeed()


class _Router:
    """Least-loaded admission: a new request goes to a replica with a free slot and the least prefill
    work pending (a join-the-shortest-queue router); with every slot taken it waits in one queue."""

    def __init__(self, replicas: list[_Replica]):
        self.replicas, self.waiting = replicas, collections.deque()

    def put(self, request: Request) -> None:
        free = [r for r in self.replicas if r.busy < r.slots]
        if free:
            min(free, key=lambda r: (r.pending_tokens, r.busy)).assign(request)
        else:
            self.waiting.append(request)

    def refill(self, replica: _Replica) -> None:
        while self.waiting and replica.busy < replica.slots:
            replica.assign(self.waiting.popleft())


def _replica_loop(env, cycle, router: _Router, me: _Replica, output: int, prompt: int, budget: float, policy: str,
                  prefill_batch: int, prefills_here: bool):
    """One replica: continuous batching with a slot cap; ``prefills_here`` False for a decode-only pool."""
    step = 0
    finishing: dict[int, list[Request]] = collections.defaultdict(list)

    def start_decoding(request, at_step):
        if output <= 1:
            request.done = env.now
        else:
            me.decoding += 1
            finishing[at_step + output - 1].append(request)

    while True:
        router.refill(me)
        if not prefills_here:
            while me.prefilling:
                start_decoding(me.prefilling.popleft(), step)
            me.pending_tokens = 0.0
        if me.decoding == 0 and not me.prefilling:
            me.wake = env.event()
            yield me.wake
            continue
        if me.prefilling and policy == "prefill_first":
            batch = [me.prefilling[i] for i in range(min(prefill_batch, len(me.prefilling)))]
            yield env.timeout(cycle(0.0, float(len(batch) * prompt)))
            for request in batch:
                me.prefilling.popleft()
                me.pending_tokens -= request.prompt_left
                request.prompt_left = 0.0
                request.first_token = env.now
                start_decoding(request, step)
            continue
        chunks: list[tuple[Request, float]] = []
        room = budget - me.decoding
        for request in me.prefilling:
            if room <= 0:
                break
            take = min(request.prompt_left, room)
            chunks.append((request, take))
            room -= take
        yield env.timeout(cycle(float(me.decoding), float(sum(t for _, t in chunks))))
        step += 1
        for request in finishing.pop(step, []):
            request.done = env.now
            me.decoding -= 1
        for request, take in chunks:
            request.prompt_left -= take
            me.pending_tokens -= take
            if request.prompt_left <= 1e-9:
                me.prefilling.remove(request)
                request.first_token = env.now
                start_decoding(request, step)


def _prefill_replica(env, cycle, queue: collections.deque, me: _Replica, handoff: _Router, prompt: int,
                     prefill_batch: int, transfer_s: float):
    """A prefill-only replica: up to ``k_b`` whole prompts per pass, then the KV transfer."""
    while True:
        if not me.prefilling:
            me.wake = env.event()
            yield me.wake
            continue
        batch = [me.prefilling.popleft() for _ in range(min(prefill_batch, len(me.prefilling)))]
        yield env.timeout(cycle(0.0, float(len(batch) * prompt)))
        me.pending_tokens -= len(batch) * prompt
        for request in batch:
            request.first_token = env.now
            env.process(_transfer(env, request, handoff, transfer_s))


def _transfer(env, request, handoff, transfer_s):
    yield env.timeout(transfer_s)
    handoff.put(request)


def _arrivals(env, rate: float, until: float, router, prompt: int, log: list, rng):
    while env.now < until:
        yield env.timeout(rng.exponential(1.0 / rate))
        request = Request(env.now, float(prompt))
        log.append(request)
        router.put(request)


@dataclass
class Outcome:
    """Per-request TTFT and TPOT of the requests that arrived in the measured window."""

    ttft_s: np.ndarray
    tpot_s: np.ndarray
    unfinished: int

    def quantile(self, q: float) -> tuple[float, float]:
        return float(np.quantile(self.ttft_s, q)), float(np.quantile(self.tpot_s, q))


def simulate_colocated(cycle_model, replicas: int, slots: int, prompt: int, output: int, rate: float, budget: float,
                       policy: str = "chunked", prefill_batch: int = 1, requests: int = 4000, seed: int = 0) -> Outcome:
    """A colocated fleet at ``rate`` req/s; returns the requests after a warm-up of about three request lifetimes."""
    env = simpy.Environment()
    rng = np.random.default_rng(seed)
    cycle = _Cycle(cycle_model)
    lifetime = output * cycle(float(slots), 0.0) + prompt * cycle(0.0, float(prompt)) / max(prompt, 1)
    warmup = 3.0 * lifetime
    horizon = warmup + requests / rate
    log: list[Request] = []
    fleet = [_Replica(env, slots) for _ in range(replicas)]
    router = _Router(fleet)
    env.process(_arrivals(env, rate, horizon, router, prompt, log, rng))
    for me in fleet:
        env.process(_replica_loop(env, cycle, router, me, output, prompt, budget, policy, prefill_batch, True))
    env.run(until=horizon + 20.0 * lifetime)
    return _outcome(log, warmup, horizon, output)


def simulate_disaggregated(prefill_model, decode_model, prefill_replicas: int, decode_replicas: int, slots: int,
                           prompt: int, output: int, rate: float, prefill_batch: int, transfer_s: float,
                           requests: int = 4000, seed: int = 0) -> Outcome:
    """A prefill pool feeding a decode pool through the KV link."""
    env = simpy.Environment()
    rng = np.random.default_rng(seed)
    pre, dec = _Cycle(prefill_model), _Cycle(decode_model)
    lifetime = output * dec(float(slots), 0.0) + pre(0.0, float(prompt)) + transfer_s
    warmup = 3.0 * lifetime
    horizon = warmup + requests / rate
    log: list[Request] = []
    prefillers = [_Replica(env, 10**9) for _ in range(prefill_replicas)]
    decoders = [_Replica(env, slots) for _ in range(decode_replicas)]
    handoff = _Router(decoders)
    env.process(_arrivals(env, rate, horizon, _Router(prefillers), prompt, log, rng))
    for me in prefillers:
        env.process(_prefill_replica(env, pre, None, me, handoff, prompt, prefill_batch, transfer_s))
    for me in decoders:
        env.process(_replica_loop(env, dec, handoff, me, output, prompt, 0.0, "chunked", 1, False))
    env.run(until=horizon + 20.0 * lifetime)
    return _outcome(log, warmup, horizon, output)


def _outcome(log: list[Request], warmup: float, horizon: float, output: int) -> Outcome:
    measured = [r for r in log if warmup <= r.arrival < horizon]
    done = [r for r in measured if not math.isnan(r.done)]
    ttft = np.array([r.first_token - r.arrival for r in done])
    tpot = np.array([(r.done - r.first_token) / max(output - 1, 1) for r in done])
    return Outcome(ttft, tpot, len(measured) - len(done))
