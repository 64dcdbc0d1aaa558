import gc
import timeit
from collections import OrderedDict

import numpy as np
import torch

from fbnet_building_blocks.fbnet_builder import PRIMITIVES
from general_functions.utils import add_text_to_file, clear_files_in_the_list
from supernet_functions.config_for_supernet import CONFIG_SUPERNET

# the settings from the page 4 of https://arxiv.org/pdf/1812.03443.pdf
#### table 2
CANDIDATE_BLOCKS = ["ir_k3_e1", "ir_k3_s2", "ir_k3_e3",
                    "ir_k3_e6", "ir_k5_e1", "ir_k5_s2",
                    "ir_k5_e3", "ir_k5_e6", "skip"]
SEARCH_SPACE = OrderedDict([
    #### table 1. input shapes of 22 searched layers (considering with strides)
    # Note: the second and third dimentions are recommended (will not be used in training) and written just for debugging
    ("input_shape", [(16, 112, 112),
                     (16, 112, 112), (24, 56, 56), (24, 56, 56), (24, 56, 56),
                     (24, 56, 56), (32, 28, 28), (32, 28, 28), (32, 28, 28),
                     (32, 28, 28), (64, 14, 14), (64, 14, 14), (64, 14, 14),
                     (64, 14, 14), (112, 14, 14), (112, 14, 14), (112, 14, 14),
                     (112, 14, 14), (184, 7, 7), (184, 7, 7), (184, 7, 7),
                     (184, 7, 7)]),
    # table 1. filter numbers over the 22 layers
    ("channel_size", [16,
                      24, 24, 24, 24,
                      32, 32, 32, 32,
                      64, 64, 64, 64,
                      112, 112, 112, 112,
                      184, 184, 184, 184,
                      352]),
    # table 1. strides over the 22 layers
    ("strides", [1,
                 2, 1, 1, 1,
                 2, 1, 1, 1,
                 2, 1, 1, 1,
                 1, 1, 1, 1,
                 2, 1, 1, 1,
                 1])
])

# **** to recalculate latency use command:
# l_table = LookUpTable(calulate_latency=True, path_to_file='lookup_table.txt', cnt_of_runs=50)
# results will be written to './supernet_functions/lookup_table.txt''
# **** to read latency from the another file use command:
# l_table = LookUpTable(calulate_latency=False, path_to_file='lookup_table.txt')
#
# The paper measures per-op latency on a Samsung S8.  We only have servers, so the table is built on the
# GPU we train on (batch = CONFIG_SUPERNET['lookup_table']['latency_batch_size'], default 32), timed with
# CUDA events.  Set 'latency_device': 'cpu' to get the old timeit-based single-image CPU numbers.


class LookUpTable:
    def __init__(self, candidate_blocks=CANDIDATE_BLOCKS, search_space=SEARCH_SPACE,
                 calulate_latency=False):
        self.cnt_layers = len(search_space["input_shape"])
        # constructors for each operation
        self.lookup_table_operations = {op_name: PRIMITIVES[op_name] for op_name in candidate_blocks}
        # arguments for the ops constructors. one set of arguments for all 9 constructors at each layer
        # input_shapes just for convinience
        self.layers_parameters, self.layers_input_shapes = self._generate_layers_parameters(search_space)

        # lookup_table
        self.lookup_table_latency = None
        if calulate_latency:
            self._create_from_operations(cnt_of_runs=CONFIG_SUPERNET['lookup_table']['number_of_runs'],
                                         write_to_file=CONFIG_SUPERNET['lookup_table']['path_to_lookup_table'])
        else:
            self._create_from_file(path_to_file=CONFIG_SUPERNET['lookup_table']['path_to_lookup_table'])

    def _generate_layers_parameters(self, search_space):
        # layers_parameters are : C_in, C_out, expansion, stride
        layers_parameters = [(search_space["input_shape"][layer_id][0],
                              search_space["channel_size"][layer_id],
                              # expansion (set to -999) embedded into operation and will not be considered
                              # (look fbnet_building_blocks/fbnet_builder.py - this is facebookresearch code
                              # and I don't want to modify it)
                              -999,
                              search_space["strides"][layer_id]
                              ) for layer_id in range(self.cnt_layers)]

        # layers_input_shapes are (C_in, input_w, input_h)
        layers_input_shapes = search_space["input_shape"]

        return layers_parameters, layers_input_shapes

    # CNT_OP_RUNS us number of times to check latency (we will take average)
    def _create_from_operations(self, cnt_of_runs, write_to_file=None):
        device = CONFIG_SUPERNET['lookup_table'].get('latency_device', 'cuda')
        if device == 'cpu':
            self.lookup_table_latency = self._calculate_latency_cpu(self.lookup_table_operations,
                                                                    self.layers_parameters,
                                                                    self.layers_input_shapes,
                                                                    cnt_of_runs)
        else:
            self.lookup_table_latency = self._calculate_latency_gpu(self.lookup_table_operations,
                                                                    self.layers_parameters,
                                                                    self.layers_input_shapes,
                                                                    cnt_of_runs)
        if write_to_file is not None:
            self._write_lookup_table_to_file(write_to_file)

    def _calculate_latency_cpu(self, operations, layers_parameters, layers_input_shapes, cnt_of_runs):
        LATENCY_BATCH_SIZE = 1
        latency_table_layer_by_ops = [{} for i in range(self.cnt_layers)]

        for layer_id in range(self.cnt_layers):
            for op_name in operations:
                op = operations[op_name](*layers_parameters[layer_id])
                input_sample = torch.randn((LATENCY_BATCH_SIZE, *layers_input_shapes[layer_id]))
                globals()['op'], globals()['input_sample'] = op, input_sample
                total_time = timeit.timeit('output = op(input_sample)', setup="gc.enable()",
                                           globals=globals(), number=cnt_of_runs)
                # measured in micro-second
                latency_table_layer_by_ops[layer_id][op_name] = total_time / cnt_of_runs / LATENCY_BATCH_SIZE * 1e6

        return latency_table_layer_by_ops

    def _calculate_latency_gpu(self, operations, layers_parameters, layers_input_shapes, cnt_of_runs):
        LATENCY_BATCH_SIZE = CONFIG_SUPERNET['lookup_table'].get('latency_batch_size', 32)
        n_warmup = 10
        latency_table_layer_by_ops = [{} for i in range(self.cnt_layers)]
        start_event = torch.cuda.Event(enable_timing=True)
        end_event = torch.cuda.Event(enable_timing=True)

        for layer_id in range(self.cnt_layers):
            input_sample = torch.randn((LATENCY_BATCH_SIZE, *layers_input_shapes[layer_id]), device='cuda')
            for op_name in operations:
                op = operations[op_name](*layers_parameters[layer_id]).cuda().eval()
                with torch.no_grad():
                    for _ in range(n_warmup):
                        op(input_sample)
                    torch.cuda.synchronize()  # warmup done, queue empty
                    start_event.record()
                    for _ in range(cnt_of_runs):
                        op(input_sample)
                    end_event.record()
                    torch.cuda.synchronize()
                # elapsed_time is in milli-seconds; the table is kept in micro-seconds per image
                total_ms = start_event.elapsed_time(end_event)
                latency_table_layer_by_ops[layer_id][op_name] = total_ms * 1e3 / cnt_of_runs / LATENCY_BATCH_SIZE
                del op
            del input_sample
            torch.cuda.empty_cache()
            gc.collect()

        return latency_table_layer_by_ops

    def _write_lookup_table_to_file(self, path_to_file):
        clear_files_in_the_list([path_to_file])
        ops = [op_name for op_name in self.lookup_table_operations]
        text = [op_name + " " for op_name in ops[:-1]]
        text.append(ops[-1] + "\n")

        for layer_id in range(self.cnt_layers):
            for op_name in ops:
                text.append(str(self.lookup_table_latency[layer_id][op_name]))
                text.append(" ")
            text[-1] = "\n"
        text = text[:-1]

        text = ''.join(text)
        add_text_to_file(text, path_to_file)

    def _create_from_file(self, path_to_file):
        self.lookup_table_latency = self._read_lookup_table_from_file(path_to_file)

    def _read_lookup_table_from_file(self, path_to_file):
        latences = [line.strip('\n') for line in open(path_to_file)]
        ops_names = latences[0].split(" ")
        latences = [list(map(float, layer.split(" "))) for layer in latences[1:]]

        lookup_table_latency = [{op_name: latences[i][op_id]
                                 for op_id, op_name in enumerate(ops_names)
                                 } for i in range(self.cnt_layers)]
        return lookup_table_latency

    def summary(self):
        """ min / max latency per layer, handy to sanity-check a freshly measured table """
        rows = []
        for layer_id, lat in enumerate(self.lookup_table_latency):
            vals = np.array(list(lat.values()))
            rows.append((layer_id, float(vals.min()), float(vals.max())))
        return rows
