"""Discrete-event simulation of a serving fleet, cycle by cycle, to check the closed forms.

The closed-form model (:mod:`tco.core.serving.search`) replaces the fleet by averages: a fluid
prefill share per cycle, square-root staffing for the waits, a percentile occupancy.
This simulation runs the fleet the model sized, request by request and cycle by cycle,
with the same hardware cost of a cycle (:meth:`tco.core.serving.steps.CycleModel.cycle_s` at the
cycle's actual decode and prefill token counts) and nothing averaged:

* Poisson arrivals at the peak rate; a router: a new request goes at once to the colocated
  replica with a free slot (at most ``slots`` sequences in flight, prefilling or decoding) and
  the least prefill work pending as of that replica's last cycle start; with every slot taken it
  waits in one first-come-first-served queue (the model's shared slot queue);
* ``chunked``: each cycle carries every decoding sequence's next token, then prefill
  chunks, oldest prompt first, up to the token budget (vLLM V1's scheduler);
  ``prefill_first``: while prompts wait, a cycle runs up to ``k_b`` whole prompts per
  micro-batch and no decode (vLLM V0);
* the first output token comes with the end of the prompt's last prefill chunk; the other
  ``O - 1`` one per cycle;
* disaggregated: one FCFS queue in front of the prefill pool, whose idle replicas take up
  to ``p x k_b`` waiting prompts per pass (``prefill_routing="shared"``), or a router that sends each prompt at
  arrival to the prefill replica with the fewest prompts waiting or in its pass, where it waits in that replica's own
  FCFS queue (``"dispatched"``: join the shortest queue); the KV cache then moves for ``kv_transfer_s``
  and the request waits (FCFS) for a slot in the decode pool, whose replicas admit at
  their cycle boundaries; the gap to its second token includes that wait.

Routing matters at high load: a router that binds a request to one busy replica (join the
shortest queue) makes it wait for that replica's whole remaining pass or prefill cycle, where a
shared queue hands it to the first of many replicas to free up. The model's colocated lanes are
those of the router (dispatched, :mod:`tco.core.serving.queueing`), its slot queues those of the shared queue, and its
prefill pools either (``serving.prefill_queue``), as the simulation's ``prefill_routing``.

A pipelined replica (``p`` stages) is simulated as one engine whose cycle carries ``p``
micro-batches, each with its share of the decode sequences and at most the micro-batch budget, a prompt's
chunk in one of them. Where the stages stream a prompt's tokens (the dataflow parts, ``streamed``) the
prefill spreads over the stages and the cycle time is the model's for the cycle's tokens together; where a
chunk rides in one micro-batch (GPU stacks), each prompt's chunk goes to the least loaded micro-batch and the
cycle lasts as if every micro-batch carried the heaviest one's prefill (the micro-batches follow one another
through the stages, each stage held by the heaviest as it passes: ``p x max`` of the micro-batches' prefill
tokens at the model's cost per token).

The event loop (:class:`_Environment`) is simpy's, cut to what these processes use: a process is a generator that
yields a delay (``env.timeout``) or a one-shot event (``env.event``), and events run in simpy's order (time, process
starts before other events at the same time, then the order they were scheduled in), so a simulation gives the
same numbers as on simpy 4.1 (every simulation of tests/test_serving_simulation.py compared, 2026-12-06; a test runs
a few on both) in less than half the time: simpy's general events, callbacks and checks cost more than the replicas'
own work.
"""

from __future__ import annotations

import collections
import heapq
import math
from dataclasses import dataclass

import numpy as np

#: the priorities of simpy's event queue: a process starts before the other events due at the same time
_URGENT, _NORMAL = 0, 1


class _Event:
    """A one-shot event one process waits on (simpy's ``env.event()``): :meth:`succeed` resumes it, in the order of the
    events scheduled at that time. Every event here is waited on as soon as it is made (a replica's wake-up, a queue's
    next arrival) or never, so a waiter is always known when it succeeds."""

    __slots__ = ("env", "triggered", "waiter")

    def __init__(self, env: _Environment):
        self.env, self.triggered, self.waiter = env, False, None

    def succeed(self) -> None:
        assert not self.triggered
        self.triggered = True
        if self.waiter is not None:
            self.env.schedule(self.waiter, 0.0, _NORMAL)


class _Environment:
    """The event loop: ``now`` [s], processes (generators yielding a delay or an :class:`_Event`), :meth:`run`."""

    def __init__(self):
        self.now = 0.0
        self.queue: list[tuple[float, int, int, object]] = []
        self.eid = 0

    def schedule(self, process, delay: float, priority: int = _NORMAL) -> None:
        self.eid += 1
        heapq.heappush(self.queue, (self.now + delay, priority, self.eid, process))

    def timeout(self, delay: float) -> float:
        return delay

    def event(self) -> _Event:
        return _Event(self)

    def process(self, generator) -> None:
        self.schedule(generator, 0.0, _URGENT)

    def run(self, until: float) -> None:
        """Every event due before ``until``, then ``now = until`` (simpy's ``run(until=...)``: the events due at
        ``until`` itself come after it)."""
        queue, pop, push = self.queue, heapq.heappop, heapq.heappush
        while queue and queue[0][0] < until:
            self.now, _, _, process = pop(queue)
            try:
                target = process.send(None)
            except StopIteration:
                continue
            if target.__class__ is _Event:
                assert not target.triggered and target.waiter is None
                target.waiter = process
            else:
                self.eid += 1
                push(queue, (self.now + target, _NORMAL, self.eid, process))
        self.now = until


@dataclass
class Request:
    arrival: float
    prompt_left: float
    first_token: float = math.nan
    done: float = math.nan


class _Cycle:
    """Memoized scalar cycle time of a replica [s].

    A cycle of a whole number of prefill tokens (every cycle here: prompts are whole tokens and so are the budgets)
    is looked up in a block of 512 such cycles at its decode tokens, each block computed by one vectorized call of
    the cycle model: the same numbers as one call per cycle (the model's arithmetic is elementwise +, -, x, /, min
    and max, rounded alike in both), and ~100x cheaper than the ~25 us of one scalar call, which the simulations of
    gamma lengths paid for up to 60,000 distinct cycles each."""

    BLOCK = 512

    def __init__(self, cycle_model):
        self.cm = cycle_model
        self.memo: dict[tuple[float, float], float] = {}
        self.blocks: dict[tuple[float, int], list[float]] = {}

    def __call__(self, decode_tokens: float, prefill_tokens: float) -> float:
        key = (decode_tokens, prefill_tokens)
        value = self.memo.get(key)
        if value is None:
            if prefill_tokens >= 0.0 and float(prefill_tokens).is_integer():
                start, at = divmod(int(prefill_tokens), self.BLOCK)
                block = self.blocks.get((decode_tokens, start))
                if block is None:
                    tokens = np.arange(start * self.BLOCK, (start + 1) * self.BLOCK, dtype=float)
                    cycle_s = self.cm.cycle_s(np.full(self.BLOCK, float(decode_tokens)), tokens)
                    block = self.blocks[decode_tokens, start] = np.broadcast_to(cycle_s, tokens.shape).tolist()
                value = block[at]
            else:
                value = float(np.asarray(self.cm.cycle_s(float(decode_tokens), float(prefill_tokens))).reshape(-1)[0])
            self.memo[key] = value
        return value


class _Queue:
    """A first-come-first-served queue that idle replicas wait on; the next arrival wakes one."""

    def __init__(self, env):
        self.env = env
        self.items: collections.deque = collections.deque()
        self.idle: collections.deque = collections.deque()

    def put(self, request: Request) -> None:
        self.items.append(request)
        while self.idle:
            event = self.idle.popleft()
            if not event.triggered:
                event.succeed()
                break

    def wait(self):
        event = self.env.event()
        self.idle.append(event)
        return event


class _Replica:
    """A colocated replica's state: sequences decoding, prompts being prefilled (oldest first)."""

    def __init__(self, env, index: int, slots: int):
        self.env, self.index, self.slots = env, index, slots
        self.decoding = 0
        self.prefilling: collections.deque = collections.deque()
        self.pending_tokens = 0.0
        self.wake = env.event()

    @property
    def busy(self) -> int:
        return self.decoding + len(self.prefilling)

    def take(self, request: Request) -> None:
        self.prefilling.append(request)
        self.pending_tokens += request.prompt_left
        if not self.wake.triggered:
            self.wake.succeed()


class _Router:
    """Least-loaded admission for colocated replicas: a new request goes at once to the replica with
    a free slot and the least prefill work pending (then the fewest sequences), as a global
    scheduler's least-loaded routing does; with every slot taken it waits in one FCFS queue that
    the next replica to free a slot drains. Replicas with a free slot sit in a heap keyed by their
    load (stale entries skipped), so a put costs O(log R)."""

    def __init__(self, replicas: list[_Replica]):
        self.replicas, self.waiting = replicas, collections.deque()
        self.version = [0] * len(replicas)
        #: the key of each replica's valid heap entry, None when it has none (slots full, or popped)
        self.live: list[tuple[float, int] | None] = [None] * len(replicas)
        self.heap: list[tuple[float, int, int, int]] = []
        self.limit = 8 * len(replicas) + 64
        for r in replicas:
            self.touch(r)

    def touch(self, r: _Replica) -> None:
        """Re-key ``r`` after its load changed (its old entry goes stale). A replica whose valid entry has the key
        already keeps it: the valid entries, and so every choice of :meth:`put`, are the same."""
        index, busy = r.index, r.decoding + len(r.prefilling)
        if busy < r.slots:
            key = (r.pending_tokens, busy)
            if self.live[index] == key:
                return
            self.version[index] += 1
            self.live[index] = key
            heapq.heappush(self.heap, (key[0], busy, index, self.version[index]))
            if len(self.heap) > self.limit:
                self.heap = [e for e in self.heap if e[3] == self.version[e[2]]]
                heapq.heapify(self.heap)
        elif self.live[index] is not None:
            self.version[index] += 1
            self.live[index] = None

    def put(self, request: Request) -> None:
        while self.heap:
            _, _, index, version = heapq.heappop(self.heap)
            if version == self.version[index]:
                self.live[index] = None
                r = self.replicas[index]
                r.take(request)
                self.touch(r)
                return
        self.waiting.append(request)

    def refill(self, r: _Replica) -> None:
        while self.waiting and r.decoding + len(r.prefilling) < r.slots:
            r.take(self.waiting.popleft())
        self.touch(r)


def _colocated_replica(env, cycle, router: _Router, me: _Replica, output: int, budget: float, policy: str,
                       prefill_batch: int, pipeline: int, streamed: bool):
    """One colocated replica: continuous batching with a slot cap.

    A replica of ``p`` pipeline stages runs ``p`` micro-batches per cycle: its token budget per
    cycle is ``p x budget`` and one prompt takes at most one micro-batch's share of it; a
    whole-prompt pass carries up to ``p x k_b`` prompts. Not ``streamed``, a cycle costs what ``p``
    micro-batches as heavy as its heaviest would (module docstring).
    """
    step = 0
    finishing: dict[int, list[Request]] = collections.defaultdict(list)

    def start_decoding(request, at_step):
        if output <= 1:
            request.done = env.now
        else:
            me.decoding += 1
            finishing[at_step + output - 1].append(request)

    memo = cycle.memo  # the cycle times met already (most cycles repeat one)
    while True:
        if router.waiting:
            router.refill(me)
        else:
            router.touch(me)
        if me.decoding == 0 and not me.prefilling:
            me.wake = env.event()
            yield me.wake
            continue
        if me.prefilling and policy == "prefill_first":
            batch = [me.prefilling[i] for i in range(min(pipeline * prefill_batch, len(me.prefilling)))]
            tokens = float(sum(r.prompt_left for r in batch))
            if not streamed and pipeline > 1:  # k_b prompts per micro-batch: the heaviest holds every stage
                per = [sum(r.prompt_left for r in batch[j::pipeline]) for j in range(pipeline)]
                tokens = float(pipeline * max(per))
            yield env.timeout(cycle(0.0, tokens))
            for request in batch:
                me.prefilling.popleft()
                me.pending_tokens -= request.prompt_left
                request.prompt_left = 0.0
                request.first_token = env.now
                start_decoding(request, step)
            continue
        if not me.prefilling:  # a decode-only cycle
            chunks, prefill = (), 0.0
        elif streamed or pipeline == 1:
            chunks = _chunks(me, budget, pipeline, streamed)
            prefill = float(sum(take for _, take, _ in chunks))
        else:
            chunks = _chunks(me, budget, pipeline, streamed)  # the heaviest micro-batch holds every stage as it passes
            prefill = float(pipeline * max((sum(t for _, t, j in chunks if j == m) for m in range(pipeline)), default=0.0))
        key = (float(me.decoding), prefill)
        duration = memo.get(key)
        yield env.timeout(cycle(*key) if duration is None else duration)
        step += 1
        for request in finishing.pop(step, ()):
            request.done = env.now
            me.decoding -= 1
        for request, take, _ in chunks:
            request.prompt_left -= take
            me.pending_tokens -= take
            if request.prompt_left <= 1e-9:
                me.prefilling.remove(request)
                request.first_token = env.now
                start_decoding(request, step)


def _chunks(me: _Replica, budget: float, pipeline: int, streamed: bool) -> list[tuple[Request, float, int]]:
    """The prefill chunks of one cycle, oldest prompt first: ``(request, tokens, micro-batch)``.

    Each micro-batch takes its share of the decode sequences and prefill up to the budget left, a prompt one chunk a
    cycle. Streamed, or with one stage, the prompts fill the cycle's whole budget left in turn (each at most one
    micro-batch's share; micro-batch 0 named); with micro-batch pipelines each prompt's chunk goes to the least loaded
    micro-batch, at most what that one has left.
    """
    free = budget - me.decoding / pipeline  # prefill tokens each micro-batch can take
    chunks: list[tuple[Request, float, int]] = []
    if streamed or pipeline == 1:
        room = pipeline * budget - me.decoding
        for request in me.prefilling:
            if room <= 0:
                break
            take = min(request.prompt_left, room, free)
            if take <= 0:
                break
            chunks.append((request, take, 0))
            room -= take
        return chunks
    loads = [0.0] * pipeline
    for request in me.prefilling:
        j = min(range(pipeline), key=loads.__getitem__)
        take = min(request.prompt_left, free - loads[j])
        if take <= 0:
            break
        chunks.append((request, take, j))
        loads[j] += take
    return chunks


def _decode_replica(env, cycle, queue: _Queue, slots: int, output: int):
    """One replica of a decode pool: takes transferred requests (FCFS) into free slots at each cycle boundary."""
    step = 0
    decoding = 0
    ending: dict[int, list[Request]] = collections.defaultdict(list)
    while True:
        while queue.items and decoding < slots:
            request = queue.items.popleft()
            if output <= 1:
                request.done = env.now
                continue
            decoding += 1
            ending[step + output - 1].append(request)
        if decoding == 0:
            yield queue.wait()
            continue
        yield env.timeout(cycle(float(decoding), 0.0))
        step += 1
        for request in ending.pop(step, []):
            request.done = env.now
            decoding -= 1


def _prefill_replica(env, cycle, queue: _Queue, handoff: _Queue, prompts_per_pass: int, transfer_s: float,
                     router: _PrefillRouter | None = None, index: int = 0):
    """A prefill-only replica: up to ``p x k_b`` waiting prompts per pass, then the KV transfer (and the router, when
    prompts are dispatched, told that they left the replica)."""
    while True:
        if not queue.items:
            yield queue.wait()
            continue
        batch = [queue.items.popleft() for _ in range(min(prompts_per_pass, len(queue.items)))]
        yield env.timeout(cycle(0.0, float(sum(r.prompt_left for r in batch))))
        if router is not None:
            router.pending[index] -= len(batch)
        for request in batch:
            request.first_token = env.now
            env.process(_transfer(env, request, handoff, transfer_s))


class _PrefillRouter:
    """Join the shortest queue for a prefill pool: a prompt goes at arrival to the replica with the fewest prompts
    waiting or in its pass (the lowest index among equals) and waits in that replica's own FCFS queue."""

    def __init__(self, queues: list[_Queue]):
        self.queues, self.pending = queues, [0] * len(queues)

    def put(self, request: Request) -> None:
        index = min(range(len(self.queues)), key=self.pending.__getitem__)
        self.pending[index] += 1
        self.queues[index].put(request)


def _transfer(env, request, handoff, transfer_s):
    yield env.timeout(transfer_s)
    handoff.put(request)


class Lengths:
    """Prompt lengths [tokens] of successive requests, drawn from their own seeded generator (the arrival times stay
    those of mean-length runs): every prompt at the mean (``scv = 0``), gamma of mean ``prompt`` and squared CV ``scv``,
    a lognormal of the same two moments (``family="lognormal"``), or resampled from a dataset's lengths rescaled to mean
    ``prompt`` (``sample``). At least one token each."""

    def __init__(self, prompt: float, scv: float = 0.0, seed: int = 0, family: str = "gamma", sample=None):
        self.prompt, self.scv, self.family = float(prompt), float(scv), family
        self.sample = None if sample is None else np.asarray(sample, float) / np.mean(sample)
        self.rng = np.random.default_rng(seed + 7919)
        self.drawn: list[float] = []  # the draws not used yet, the next last

    def _draw(self) -> float:
        """The generator's next draw: a resampled length over the mean, a lognormal of mean 1, or a gamma length.
        Drawn 1,024 at a time, which gives the numbers one draw at a time gives (numpy's Generator fills an array
        draw by draw; ``choice(a)`` is ``a[integers(0, len(a))]``), at a tenth of the cost."""
        if not self.drawn:
            if self.sample is not None:
                block = self.sample[self.rng.integers(0, len(self.sample), size=1024)]
            elif self.family == "lognormal":
                sigma2 = math.log1p(self.scv)
                block = self.rng.lognormal(-0.5 * sigma2, math.sqrt(sigma2), size=1024)
            else:
                block = self.rng.gamma(1.0 / self.scv, self.prompt * self.scv, size=1024)
            self.drawn = block.tolist()[::-1]
        return self.drawn.pop()

    def __call__(self) -> float:
        if self.sample is None and self.scv == 0.0:
            return self.prompt
        if self.sample is not None or self.family == "lognormal":
            return max(1.0, round(self.prompt * self._draw()))
        return max(1.0, round(self._draw()))


def _arrivals(env, rate: float, until: float, queue, lengths: Lengths, log: list, rng):
    """Poisson arrivals at ``rate`` until ``until``; the gaps drawn 1,024 at a time (:meth:`Lengths._draw`)."""
    gaps: list[float] = []
    while env.now < until:
        if not gaps:
            gaps = rng.exponential(1.0 / rate, size=1024).tolist()[::-1]
        yield env.timeout(gaps.pop())
        request = Request(env.now, float(lengths()))
        log.append(request)
        queue.put(request)


@dataclass
class Outcome:
    """Per-request TTFT and TPOT of the requests that arrived in the measured window."""

    ttft_s: np.ndarray
    tpot_s: np.ndarray
    unfinished: int

    def quantile(self, q: float) -> tuple[float, float]:
        return float(np.quantile(self.ttft_s, q)), float(np.quantile(self.tpot_s, q))


def _window(lifetime: float, rate: float, requests: int) -> tuple[float, float]:
    """The measured window of arrivals: after a warm-up of 1.5 request lifetimes (occupancy settles
    within one), long enough for ``requests`` arrivals."""
    warmup = 1.5 * lifetime
    return warmup, warmup + requests / rate


def _run(env, log: list[Request], warmup: float, horizon: float, lifetime: float) -> None:
    """Run until every request that arrived in the window is done (arrivals go on meanwhile, so the
    measured requests decode beside newer prompts, as in steady state), or 20 lifetimes past it."""
    end = horizon + 20.0 * lifetime
    t = horizon
    waiting = None  # the measured requests not done yet (all have arrived at the first check)
    while t < end:
        t = min(t + 0.25 * lifetime, end)
        env.run(until=t)
        waiting = [r for r in (log if waiting is None else waiting) if warmup <= r.arrival < horizon and math.isnan(r.done)]
        if not waiting:
            return


def simulate_colocated(cycle_model, replicas: int, slots: int, prompt: int, output: int, rate: float, budget: float,
                       policy: str = "chunked", prefill_batch: int = 1, requests: int = 4000, seed: int = 0,
                       lengths: Lengths | None = None, streamed: bool = False, environment=_Environment) -> Outcome:
    """A colocated fleet at ``rate`` req/s (replicas of ``cycle_model.pipeline`` stages); prompts of ``prompt`` tokens or
    drawn by ``lengths``; ``streamed``: the stages stream a prompt's tokens (module docstring). ``environment``: the
    event loop's class (``simpy.Environment`` runs the same processes)."""
    env = environment()
    rng = np.random.default_rng(seed)
    cycle = _Cycle(cycle_model)
    lifetime = output * cycle(float(slots), 0.0) + cycle(0.0, float(prompt))
    warmup, horizon = _window(lifetime, rate, requests)
    log: list[Request] = []
    fleet = [_Replica(env, i, slots) for i in range(replicas)]
    router = _Router(fleet)
    env.process(_arrivals(env, rate, horizon + 21.0 * lifetime, router, lengths or Lengths(prompt), log, rng))
    for me in fleet:
        env.process(_colocated_replica(env, cycle, router, me, output, budget, policy, prefill_batch,
                                       cycle_model.pipeline, streamed))
    _run(env, log, warmup, horizon, lifetime)
    return _outcome(log, warmup, horizon, output)


def simulate_disaggregated(prefill_model, decode_model, prefill_replicas: int, decode_replicas: int, slots: int,
                           prompt: int, output: int, rate: float, prefill_batch: int, transfer_s: float,
                           requests: int = 4000, seed: int = 0, lengths: Lengths | None = None,
                           prefill_routing: str = "shared", environment=_Environment) -> Outcome:
    """A prefill pool feeding a decode pool through the KV link (prompts as in :func:`simulate_colocated`; the prefill
    pool's prompts in one shared queue or dispatched at arrival, ``prefill_routing``: the module docstring)."""
    env = environment()
    rng = np.random.default_rng(seed)
    pre, dec = _Cycle(prefill_model), _Cycle(decode_model)
    lifetime = output * dec(float(slots), 0.0) + pre(0.0, float(prompt)) + transfer_s
    warmup, horizon = _window(lifetime, rate, requests)
    log: list[Request] = []
    handoff = _Queue(env)
    queues = [_Queue(env) for _ in range(prefill_replicas)] if prefill_routing == "dispatched" else [_Queue(env)]
    router = _PrefillRouter(queues) if prefill_routing == "dispatched" else None
    env.process(_arrivals(env, rate, horizon + 21.0 * lifetime, router or queues[0], lengths or Lengths(prompt), log, rng))
    per_pass = prefill_model.pipeline * prefill_batch
    for i in range(prefill_replicas):
        env.process(_prefill_replica(env, pre, queues[i] if router else queues[0], handoff, per_pass, transfer_s, router, i))
    for _ in range(decode_replicas):
        env.process(_decode_replica(env, dec, handoff, slots, output))
    _run(env, log, warmup, horizon, lifetime)
    return _outcome(log, warmup, horizon, output)


def _outcome(log: list[Request], warmup: float, horizon: float, output: int) -> Outcome:
    measured = [r for r in log if warmup <= r.arrival < horizon]
    done = [r for r in measured if not math.isnan(r.done)]
    ttft = np.array([r.first_token - r.arrival for r in done])
    tpot = np.array([(r.done - r.first_token) / max(output - 1, 1) for r in done])
    return Outcome(ttft, tpot, len(measured) - len(done))
