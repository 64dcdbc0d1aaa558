#!/usr/bin/env python3
#
#    This file is part of Leela Chess.
#    Copyright (C) 2018 Folkert Huizinga
#    Copyright (C) 2017-2018 Gian-Carlo Pascutto
#
#    Leela Chess is free software: you can redistribute it and/or modify
#    it under the terms of the GNU General Public License as published by
#    the Free Software Foundation, either version 3 of the License, or
#    (at your option) any later version.

import gzip
import itertools
import multiprocessing as mp
import random
import struct
import sys
import unittest

import numpy as np

from shufflebuffer import ShuffleBuffer

V6_VERSION = struct.pack('i', 6)
V5_VERSION = struct.pack('i', 5)
CLASSICAL_INPUT = struct.pack('i', 1)
V4_VERSION = struct.pack('i', 4)
V3_VERSION = struct.pack('i', 3)
V6_STRUCT_STRING = '4si7432s832sBBBBBBBbfffffffffffffffIHHff'
V5_STRUCT_STRING = '4si7432s832sBBBBBBBbfffffff'
V4_STRUCT_STRING = '4s7432s832sBBBBBBBbffff'
V3_STRUCT_STRING = '4s7432s832sBBBBBBBb'


def reverse_expand_bits(plane):
    return np.unpackbits(np.array([plane], dtype=np.uint8))[::-1].astype(np.float32).tobytes()


def chunk_reader(chunk_filenames, chunk_filename_queue):
    """
    Reads chunk filenames, shuffling them between passes, and hands them
    to the worker processes through the queue.
    """
    chunks = []
    done = chunk_filenames

    while True:
        if not chunks:
            chunks, done = done, chunks
            random.shuffle(chunks)
        if not chunks:
            print("chunk_reader didn't find any chunks.")
            return None
        while len(chunks):
            filename = chunks.pop()
            done.append(filename)
            chunk_filename_queue.put(filename)
    print("chunk_reader exiting.")
    return None


class ChunkParser:
    def __init__(self, chunks, expected_input_format, shuffle_size=1, sample=1, buffer_size=1,
                 batch_size=256, workers=None):
        """
        Read data and yield batches of raw tensors.

        'chunks' list of chunk filenames, 'shuffle_size' is the size of the
        shuffle buffer, 'sample' is the rate to down-sample and 'workers' is
        the number of child workers to use. Batches come out as numpy
        tuples (planes, policy, result, q, m); moving them to the training
        device is left to the caller.
        """
        self.expected_input_format = expected_input_format

        # Build 2 flat float32 planes with values 0,1
        self.flat_planes = []
        for i in range(2):
            self.flat_planes.append((np.zeros(64, dtype=np.float32) + i).tobytes())

        # set the down-sampling rate
        self.sample = sample
        # set the mini-batch size
        self.batch_size = batch_size
        # set number of elements in the shuffle buffer.
        self.shuffle_size = shuffle_size
        # Start worker processes, leave 2 for TensorFlow
        if workers is None:
            workers = max(1, mp.cpu_count() - 2)

        if workers > 0:
            print("Using {} worker processes.".format(workers))

            # Start the child workers running
            self.readers = []
            self.writers = []
            self.processes = []
            self.chunk_filename_queue = mp.Queue(maxsize=4096)
            for _ in range(workers):
                read, write = mp.Pipe(duplex=False)
                p = mp.Process(target=self.task, args=(self.chunk_filename_queue, write))
                p.daemon = True
                self.processes.append(p)
                p.start()
                self.readers.append(read)
                self.writers.append(write)

            self.chunk_process = mp.Process(target=chunk_reader, args=(chunks, self.chunk_filename_queue))
            self.chunk_process.daemon = True
            self.chunk_process.start()
        else:
            self.chunks = chunks

        self.init_structs()

    def shutdown(self):
        """Terminates all the workers"""
        for p in self.processes + [self.chunk_process]:
            p.terminate()
            p.join()

    def init_structs(self):
        """
        struct.Struct doesn't pickle, so it needs to be separately
        constructed in workers.
        """
        self.v6_struct = struct.Struct(V6_STRUCT_STRING)
        self.v5_struct = struct.Struct(V5_STRUCT_STRING)
        self.v4_struct = struct.Struct(V4_STRUCT_STRING)
        self.v3_struct = struct.Struct(V3_STRUCT_STRING)

    @staticmethod
    def parse_function(planes, probs, winner, q, plies_left):
        """
        Convert unpacked record batches to numpy arrays.
        """
        planes = np.frombuffer(planes, dtype=np.float32).reshape(-1, 112, 8 * 8)
        probs = np.frombuffer(probs, dtype=np.float32).reshape(-1, 1858)
        winner = np.frombuffer(winner, dtype=np.float32).reshape(-1, 3)
        q = np.frombuffer(q, dtype=np.float32).reshape(-1, 3)
        plies_left = np.frombuffer(plies_left, dtype=np.float32).reshape(-1, 1)
        return (planes, probs, winner, q, plies_left)

    def convert_v6_to_tuple(self, content):
        """Unpack a v6 binary record to 5-tuple (state, policy pi, result, q, m)"""
        (ver, input_format, probs, planes, us_ooo, us_oo, them_ooo, them_oo, stm, rule50_count,
         invariance_info, dep_result, root_q, best_q, root_d, best_d, root_m, best_m, plies_left,
         result_q, result_d, played_q, played_d, played_m, orig_q, orig_d, orig_m, visits,
         played_idx, best_idx, pol_kld, q_st) = self.v6_struct.unpack(content)

        if plies_left == 0:
            plies_left = invariance_info
        plies_left = struct.pack('f', plies_left)

        assert input_format == self.expected_input_format

        # Unpack bit planes and cast to 32 bit float
        planes = np.unpackbits(np.frombuffer(planes, dtype=np.uint8)).astype(np.float32)
        rule50_divisor = 99.0
        if input_format > 3:
            rule50_divisor = 100.0
        rule50_plane = struct.pack('f', rule50_count / rule50_divisor) * 64

        middle_planes = self.flat_planes[us_ooo] + \
                        self.flat_planes[us_oo] + \
                        self.flat_planes[them_ooo] + \
                        self.flat_planes[them_oo] + \
                        self.flat_planes[stm]

        aux_plus_6_plane = self.flat_planes[0]
        if (input_format == 132 or input_format == 133) and invariance_info >= 128:
            aux_plus_6_plane = self.flat_planes[1]
        # Concatenate all byteplanes. Make the last plane all 1's so the NN can
        # detect edges of the board more easily
        planes = planes.tobytes() + \
                 middle_planes + \
                 rule50_plane + \
                 aux_plus_6_plane + \
                 self.flat_planes[1]

        assert len(planes) == ((8 * 13 * 1 + 8 * 1 * 1) * 8 * 8 * 4)

        winner = struct.pack('fff', 0.5 * (1.0 - result_d + result_q), result_d, 0.5 * (1.0 - result_d - result_q))
        best_q_w = 0.5 * (1.0 - best_d + best_q)
        best_q_l = 0.5 * (1.0 - best_d - best_q)
        best_q = struct.pack('fff', best_q_w, best_d, best_q_l)

        return (planes, probs, winner, best_q, plies_left)

    def sample_record(self, chunkdata):
        """
        Randomly sample through the v3/4/5/6 chunk data and select records in v6 format
        Downsampling to avoid highly correlated positions skews size distribution
        towards larger games, so this downsamples on a per-file basis.
        """
        version = chunkdata[0:4]
        if version == V6_VERSION:
            record_size = self.v6_struct.size
        else:
            return

        for i in range(0, len(chunkdata), record_size):
            if self.sample > 1:
                # Downsample, using only 1/Nth of the items.
                if random.randint(0, self.sample - 1) != 0:
                    continue  # Skip this record.
            record = chunkdata[i:i + record_size]
            yield record

    def task(self, chunk_filename_queue, writer):
        """
        Run in fork'ed process, read data from chunkdatasrc, parsing, shuffling and
        sending v6 data through pipe back to main process.
        """
        self.init_structs()
        while True:
            filename = chunk_filename_queue.get()
            try:
                with gzip.open(filename, 'rb') as chunk_file:
                    version = chunk_file.read(4)
                    chunk_file.seek(0)
                    if version == V6_VERSION:
                        record_size = self.v6_struct.size
                    else:
                        print('Unknown version {} in file {}'.format(version, filename))
                        continue
                    while True:
                        chunkdata = chunk_file.read(256 * record_size)
                        if len(chunkdata) == 0:
                            break
                        for item in self.sample_record(chunkdata):
                            writer.send_bytes(item)
            except Exception:
                print("failed to parse {}".format(filename))
                continue

    def v6_gen(self):
        """
        Read v6 records from child workers, shuffle, and yield
        records.
        """
        sbuff = ShuffleBuffer(self.v6_struct.size, self.shuffle_size)
        while len(self.readers):
            for r in self.readers:
                try:
                    s = r.recv_bytes()
                    s = sbuff.insert_or_replace(s)
                    if s is None:
                        continue  # shuffle buffer not yet full
                    yield s
                except EOFError:
                    print("Reader EOF")
                    self.readers.remove(r)
        # drain the shuffle buffer.
        while True:
            s = sbuff.extract()
            if s is None:
                return
            yield s

    def tuple_gen(self, gen):
        """
        Take a generator producing v6 records and convert them to tuples.
        applying a random symmetry on the way.
        """
        for r in gen:
            yield self.convert_v6_to_tuple(r)

    def batch_gen(self, gen, allow_partial=True):
        """
        Pack multiple records into a single batch
        """
        # Get N records. We flatten the returned generator to
        # a list because we need to reuse it.
        while True:
            s = list(itertools.islice(gen, self.batch_size))
            if not len(s) or (not allow_partial and len(s) != self.batch_size):
                return
            yield (b''.join([x[0] for x in s]), b''.join([x[1] for x in s]), b''.join([x[2] for x in s]),
                   b''.join([x[3] for x in s]), b''.join([x[4] for x in s]))

    def parse(self):
        """
        Read data from child workers and yield batches of unpacked records
        """
        gen = self.v6_gen()  # read from workers
        gen = self.tuple_gen(gen)  # convert v6->tuple
        gen = self.batch_gen(gen, allow_partial=False)  # assemble into batches
        for b in gen:
            yield self.parse_function(*b)
