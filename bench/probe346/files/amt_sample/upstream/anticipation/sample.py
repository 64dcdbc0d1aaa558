"""
API functions for sampling from anticipatory infilling models.

All tensors are created on ``model.device`` so the same code runs on whatever device the
caller moved the model to (GPU in all our experiments; CPU works for the small model).
"""
import math

import torch
import torch.nn.functional as F

from tqdm import tqdm

from anticipation import ops
from anticipation.config import *
from anticipation.vocab import *


def safe_logits(logits, idx):
    logits[CONTROL_OFFSET:SPECIAL_OFFSET] = -float('inf') # don't generate controls
    logits[SPECIAL_OFFSET:] = -float('inf')               # don't generate special tokens

    # don't generate stuff in the wrong time slot
    if idx % 3 == 0:
        logits[DUR_OFFSET:DUR_OFFSET+MAX_DUR] = -float('inf')
        logits[NOTE_OFFSET:NOTE_OFFSET+MAX_NOTE] = -float('inf')
    elif idx % 3 == 1:
        logits[TIME_OFFSET:TIME_OFFSET+MAX_TIME] = -float('inf')
        logits[NOTE_OFFSET:NOTE_OFFSET+MAX_NOTE] = -float('inf')
    elif idx % 3 == 2:
        logits[TIME_OFFSET:TIME_OFFSET+MAX_TIME] = -float('inf')
        logits[DUR_OFFSET:DUR_OFFSET+MAX_DUR] = -float('inf')

    return logits


def nucleus(logits, top_p):
    # from HF implementation
    if top_p < 1.0:
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)
        cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)

        # Remove tokens with cumulative probability above the threshold (token with 0 are kept)
        sorted_indices_to_remove = cumulative_probs > top_p

        # Shift the indices to the right to keep also the first token above the threshold
        sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
        sorted_indices_to_remove[..., 0] = 0

        # scatter sorted tensors to original indexing
        indices_to_remove = sorted_indices_to_remove.scatter(0, sorted_indices, sorted_indices_to_remove)
        logits[indices_to_remove] = -float("inf")

    return logits


def future_logits(logits, curtime):
    """ don't sample events in the past """
    if curtime > 0:
        logits[TIME_OFFSET:TIME_OFFSET+curtime] = -float('inf')

    return logits


def instr_logits(logits, full_history):
    """ don't sample more than 16 instruments """
    instrs = ops.get_instruments(full_history)
    if len(instrs) < 15: # 16 - 1 to account for the reserved drum track
        return logits

    for instr in range(MAX_INSTR):
        if instr not in instrs:
            logits[NOTE_OFFSET+instr*MAX_PITCH:NOTE_OFFSET+(instr+1)*MAX_PITCH] = -float('inf')

    return logits


def masked_instr_logits(logits, masked_instrs):
    """ supress the given instruments """
    for instr in masked_instrs:
        logits[NOTE_OFFSET+instr*MAX_PITCH:NOTE_OFFSET+(instr+1)*MAX_PITCH] = -float('inf')

    return logits


def add_token(model, z, tokens, top_p, current_time, debug=False):
    assert len(tokens) % 3 == 0

    history = tokens.copy()
    lookback = max(len(tokens) - 1017, 0)
    history = history[lookback:] # Markov window
    offset = ops.min_time(history, seconds=False)
    history[::3] = [tok - offset for tok in history[::3]] # relativize time in the history buffer

    new_token = []
    with torch.no_grad():
        for i in range(3):
            input_tokens = torch.tensor(z + history + new_token).unsqueeze(0).to(model.device)
            logits = model(input_tokens).logits[0,-1]

            idx = input_tokens.shape[1]-1
            logits = safe_logits(logits, idx)
            if i == 0:
                logits = future_logits(logits, current_time - offset)
            elif i == 2:
                logits = instr_logits(logits, tokens)
            logits = nucleus(logits, top_p)

            probs = F.softmax(logits, dim=-1)
            token = torch.multinomial(probs, 1)
            new_token.append(int(token))

    new_token[0] += offset # revert to full sequence timing
    if debug:
        print(f'  OFFSET = {offset}, LEN = {len(history)}, TIME = {tokens[::3][-5:]}')

    return new_token


class _ControlQueue(object):
    """Pops (time, dur, note) triples off a flat token list in time order."""

    def __init__(self, tokens, time_offset):
        self.tokens = list(tokens)
        self.time_offset = time_offset

    def __bool__(self):
        return len(self.tokens) > 0

    def next_time(self):
        if not self.tokens:
            return math.inf
        return self.tokens[0] - self.time_offset

    def pop(self):
        triple, self.tokens = self.tokens[0:3], self.tokens[3:]
        return triple


def _debug_event(tag, triple, time_off, dur_off, note_off):
    note = triple[2] - note_off
    instr = note // 2**7
    print(tag, triple[0] - time_off, triple[1] - dur_off, instr, note - (2**7) * instr)


def generate(model, start_time, end_time, inputs=None, controls=None, top_p=1.0, debug=False, delta=DELTA*TIME_RESOLUTION):
    inputs = [] if inputs is None else inputs
    controls = [] if controls is None else controls

    start_time = int(TIME_RESOLUTION*start_time)
    end_time = int(TIME_RESOLUTION*end_time)

    # the prompt is everything up to start_time; later events become (anticipated) controls
    prompt = ops.pad(ops.clip(inputs, 0, start_time, clip_duration=False), start_time)
    future = ops.clip(inputs, start_time+1, ops.max_time(inputs, seconds=False), clip_duration=False)
    controls = ops.clip(controls, DELTA, ops.max_time(controls, seconds=False), clip_duration=False)
    if debug:
        print('Future'); ops.print_tokens(future)
        print('Controls'); ops.print_tokens(controls)

    z = [ANTICIPATE] if (controls or future) else [AUTOREGRESS]
    tokens, controls = ops.anticipate(prompt, ops.sort(controls + [CONTROL_OFFSET+token for token in future]))
    queue = _ControlQueue(controls, ATIME_OFFSET)

    current_time = ops.max_time(prompt, seconds=False)
    if debug:
        print('AR Mode' if z[0] == AUTOREGRESS else 'AAR Mode', '| current time:', current_time)

    with tqdm(range(end_time-start_time)) as progress:
        while True:
            # interleave every control that falls inside the anticipation window
            while queue and current_time >= queue.next_time() - delta:
                triple = queue.pop()
                tokens.extend(triple)
                if debug:
                    _debug_event('A', triple, ATIME_OFFSET, ADUR_OFFSET, ANOTE_OFFSET)

            new_token = add_token(model, z, tokens, top_p, max(start_time, current_time))
            new_time = new_token[0] - TIME_OFFSET
            if new_time >= end_time:
                break
            if debug:
                _debug_event('C', new_token, TIME_OFFSET, DUR_OFFSET, NOTE_OFFSET)

            tokens.extend(new_token)
            progress.update(new_time - current_time)
            assert new_time >= current_time
            current_time = new_time

    events, _ = ops.split(tokens)
    return ops.sort(ops.unpad(events) + future)


def generate_ar(model, start_time, end_time, inputs=None, controls=None, top_p=1.0, debug=False, delta=DELTA*TIME_RESOLUTION):
    """Plain autoregressive baseline: controls are treated as ordinary events and back-filled."""
    inputs = [] if inputs is None else inputs
    controls = [] if controls is None else [token-CONTROL_OFFSET for token in controls]

    start_time = int(TIME_RESOLUTION*start_time)
    end_time = int(TIME_RESOLUTION*end_time)

    inputs = ops.sort(inputs + controls)
    prompt = ops.pad(ops.clip(inputs, 0, start_time, clip_duration=False), start_time)
    future = ops.clip(inputs, start_time+1, ops.max_time(inputs, seconds=False), clip_duration=False)
    if debug:
        print('Prompt'); ops.print_tokens(prompt)
        print('Future'); ops.print_tokens(future)

    z = [AUTOREGRESS]
    queue = _ControlQueue(future, TIME_OFFSET)
    current_time = ops.max_time(prompt, seconds=False)
    tokens = prompt

    with tqdm(range(end_time-start_time)) as progress:
        while True:
            new_token = add_token(model, z, tokens, top_p, max(start_time, current_time))
            new_time = new_token[0] - TIME_OFFSET
            if new_time >= end_time:
                break

            dt = new_time - current_time
            assert dt >= 0
            current_time = new_time

            # back-fill anything that should have come before the new token
            while queue and current_time >= queue.next_time():
                triple = queue.pop()
                tokens.extend(triple)
                if debug:
                    _debug_event('A', triple, TIME_OFFSET, DUR_OFFSET, NOTE_OFFSET)

            if debug:
                _debug_event('C', new_token, TIME_OFFSET, DUR_OFFSET, NOTE_OFFSET)
            tokens.extend(new_token)
            progress.update(dt)

    return ops.sort(ops.unpad(tokens) + queue.tokens)
