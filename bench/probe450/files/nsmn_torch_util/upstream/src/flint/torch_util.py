"""Small tensor helpers shared by the NSMN models (sequence packing, masking, attention)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def get_state_shape(rnn: nn.RNNBase, batch_size, bidirectional=False):
    """
    Return the state shape of a given RNN. This is helpful when you want to create a init state for RNN.
    """
    if bidirectional:
        num_directions = 2
    else:
        num_directions = 1

    if isinstance(rnn, nn.LSTM):
        h_shape = (rnn.num_layers * num_directions, batch_size, rnn.hidden_size)
        c_shape = (rnn.num_layers * num_directions, batch_size, rnn.hidden_size)
        return h_shape, c_shape

    elif isinstance(rnn, nn.GRU):
        h_shape = (rnn.num_layers * num_directions, batch_size, rnn.hidden_size)
        return h_shape

    elif isinstance(rnn, nn.RNN):
        h_shape = (rnn.num_layers * num_directions, batch_size, rnn.hidden_size)
        return h_shape

    else:
        raise ValueError('Unknown rnn type')


def pack_list_sequence(inputs, l, max_l=None, batch_first=True):
    """
    Pack a batch of Tensor into one Tensor with max_length.
    :param inputs:
    :param l:
    :param max_l: The max_length of the packed sequence.
    :param batch_first:
    :return:
    """
    batch_list = []
    max_l = max(list(l)) if not max_l else max_l
    batch_size = len(inputs)

    for b_i in range(batch_size):
        batch_list.append(pad(inputs[b_i], max_l))
    pack_batch_list = torch.stack(batch_list, dim=1) if not batch_first \
        else torch.stack(batch_list, dim=0)
    return pack_batch_list


def pad(t, length, batch_first=False):
    """
    Padding the sequence to a fixed length.
    :param t: [B * T * D] or [B * T] if batch_first else [T * B * D] or [T * B]
    :param length: [B]
    :param batch_first:
    :return:
    """
    if batch_first:
        # [B * T * D]
        if length <= t.size(1):
            return t
        else:
            batch_size = t.size(0)
            pad_seq = Variable(t.data.new(batch_size, length - t.size(1), *t.size()[2:]).zero_())
            return torch.cat([t, pad_seq], dim=1)
    else:
        # [T * B * D]
        if length <= t.size(0):
            return t
        else:
            return torch.cat([t, Variable(t.data.new(length - t.size(0), *t.size()[1:]).zero_())])


def auto_rnn(rnn: nn.RNNBase, seqs, lengths, batch_first=True, init_state=None, output_last_states=False):
    batch_size = seqs.size(0) if batch_first else seqs.size(1)
    state_shape = get_state_shape(rnn, batch_size, rnn.bidirectional)

    if not init_state:
        h0 = c0 = Variable(seqs.data.new(*state_shape).zero_())
    else:
        h0 = init_state[0]
        c0 = init_state[1]

    packed_pinputs, r_index, init_state = pack_for_rnn_seq(seqs, lengths, batch_first, (h0, c0))

    output, (hn, cn) = rnn(packed_pinputs, init_state)

    output = unpack_from_rnn_seq(output, r_index, batch_first)

    if not output_last_states:
        return output
    else:
        last_state = reverse_indice_for_state(hn, r_index)
        return output, last_state


def pack_for_rnn_seq(inputs, lengths, batch_first=True, states=None):
    """
    :param states: [rnn.num_layers, batch_size, rnn.hidden_size]
    :param inputs: Shape of the input should be [B * T * D] if batch_first else [T * B * D].
    :param lengths:  [B]
    :param batch_first:
    :return:
    """
    if not batch_first:
        _, sorted_indices = lengths.sort()
        '''
            Reverse to decreasing order
        '''
        r_index = reversed(list(sorted_indices))

        s_inputs_list = []
        lengths_list = []
        reverse_indices = np.zeros(lengths.size(0), dtype=np.int64)

        for j, i in enumerate(r_index):
            s_inputs_list.append(inputs[:, i, :].unsqueeze(1))
            lengths_list.append(lengths[i])
            reverse_indices[i] = j

        reverse_indices = list(reverse_indices)

        s_inputs = torch.cat(s_inputs_list, 1)
        packed_seq = nn.utils.rnn.pack_padded_sequence(s_inputs, lengths_list)

        return packed_seq, reverse_indices

    else:
        _, sorted_indices = lengths.sort()
        '''
            Reverse to decreasing order
        '''
        r_index = reversed(list(sorted_indices))

        s_inputs_list = []
        lengths_list = []
        reverse_indices = np.zeros(lengths.size(0), dtype=np.int64)

        if states is None:
            states = ()
        elif not isinstance(states, tuple):
            states = (states,)  # rnn.num_layers, batch_size, rnn.hidden_size

        states_lists = tuple([] for _ in states)

        for j, i in enumerate(r_index):
            s_inputs_list.append(inputs[i, :, :])
            lengths_list.append(lengths[i])
            reverse_indices[i] = j

            for state_list, state in zip(states_lists, states):
                state_list.append(state[:, i, :].unsqueeze(1))

        reverse_indices = list(reverse_indices)

        s_inputs = torch.stack(s_inputs_list, dim=0)
        packed_seq = nn.utils.rnn.pack_padded_sequence(s_inputs, lengths_list, batch_first=batch_first)

        r_states = tuple(torch.cat(state_list, dim=1) for state_list in states_lists)
        if len(r_states) == 1:
            r_states = r_states[0]

        return packed_seq, reverse_indices, r_states


def unpack_from_rnn_seq(packed_seq, reverse_indices, batch_first=True):
    unpacked_seq, _ = nn.utils.rnn.pad_packed_sequence(packed_seq, batch_first=batch_first)
    s_inputs_list = []

    if not batch_first:
        for i in reverse_indices:
            s_inputs_list.append(unpacked_seq[:, i, :].unsqueeze(1))
        return torch.cat(s_inputs_list, 1)
    else:
        for i in reverse_indices:
            s_inputs_list.append(unpacked_seq[i, :, :].unsqueeze(0))
        return torch.cat(s_inputs_list, 0)


def reverse_indice_for_state(states, reverse_indices):
    """
    :param states: [rnn.num_layers, batch_size, rnn.hidden_size]
    :param reverse_indices: [batch_size]
    :return:
    """
    if states is None:
        return states
    return states[:, reverse_indices, :]


def seq2seq_att(mems, lengths, state, att_net=None):
    """
    :param mems: [B, T, D_mem] This are the memories.
                    I call memory for this variable because I think attention is just like read something and then
                    make alignments with your memories.
                    This memory here is usually the input hidden state of the encoder.

    :param lengths: [B]
    :param state: [B, D_state]
                    I call state for this variable because it's the state I percepts at this time step.

    :param att_net: This is the attention network that will be used to calculate the alignment score between
                    state and memories.
                    input of the att_net is mems and state with shape:
                        mems: [exB, D_mem]
                        state: [exB, D_state]
                    return of the att_net is [exB, 1]

                    So any function that map a vector to a scalar could work.

    :return: [B, D_result]
    """

    d_state = state.size(1)

    if not att_net:
        return state
    else:
        batch_list_mems = []
        batch_list_state = []
        for i, l in enumerate(lengths):
            b_mems = mems[i, :l]  # [T, D_mem]
            batch_list_mems.append(b_mems)

            b_state = state[i].expand(b_mems.size(0), d_state)  # [T, D_state]
            batch_list_state.append(b_state)

        packed_sequence_mems = torch.cat(batch_list_mems, 0)  # [sum(l), D_mem]
        packed_sequence_state = torch.cat(batch_list_state, 0)  # [sum(l), D_state]

        align_score = att_net(packed_sequence_mems, packed_sequence_state)  # [sum(l), 1]

        # The score grouped as [(a1, a2, a3), (a1, a2), (a1, a2, a3, a4)].
        # aligned_seq = packed_sequence_mems * align_score

        start = 0
        result_list = []
        for i, l in enumerate(lengths):
            end = start + l

            b_mems = packed_sequence_mems[start:end, :]  # [l, D_mems]
            b_score = align_score[start:end, :]  # [l, 1]

            softed_b_score = F.softmax(b_score.transpose(0, 1)).transpose(0, 1)  # [l, 1]

            weighted_sum = torch.sum(b_mems * softed_b_score, dim=0, keepdim=False)  # [D_mems]

            result_list.append(weighted_sum)

            start = end

        result = torch.stack(result_list, dim=0)

        return result


def gen_prefix_mask(lengths, max_len, inputs):
    """Boolean mask [B, T] that is 1 inside each sequence; placed on the device of `inputs`."""
    mask = torch.arange(0, max_len).long().unsqueeze(0).expand(lengths.size(0), max_len)
    mask = mask < lengths.long().cpu().unsqueeze(1)
    if inputs.is_cuda:
        mask = mask.cuda(inputs.get_device())
    return mask


def length_truncate(seq, max_l, is_elmo=False):
    def _truncate(seq):
        if seq.size(1) > max_l:
            return seq[:, :max_l, ...]
        else:
            return seq

    if not is_elmo:
        return _truncate(seq)
    else:
        s_elmo, s_len = seq
        return _truncate(s_elmo), s_len.clamp(max=max_l)


def get_length_and_mask(seq):
    len_mask = (seq != 0).long()
    len_t = len_mask.sum(1)
    return len_mask, len_t


def max_along_time(inputs, lengths, list_in=False):
    """
    :param inputs: [B, T, D]
    :param lengths:  [B]
    :return: [B * D] max_along_time
    :param list_in:
    """
    ls = list(lengths)

    if not list_in:
        b_seq_max_list = []
        for i, l in enumerate(ls):
            seq_i = inputs[i, :l, :]
            seq_i_max, _ = seq_i.max(dim=0)
            seq_i_max = seq_i_max.squeeze()
            b_seq_max_list.append(seq_i_max)

        return torch.stack(b_seq_max_list)
    else:
        b_seq_max_list = []
        for i, l in enumerate(ls):
            seq_i = inputs[i]
            seq_i_max, _ = seq_i.max(dim=0)
            seq_i_max = seq_i_max.squeeze()
            b_seq_max_list.append(seq_i_max)

        return torch.stack(b_seq_max_list)


def avg_along_time(inputs, lengths, list_in=False):
    ls = list(lengths)

    b_seq_avg_list = []
    for i, l in enumerate(ls):
        seq_i = inputs[i, :l, :] if not list_in else inputs[i]
        b_seq_avg_list.append(seq_i.mean(dim=0))

    return torch.stack(b_seq_avg_list)


import numpy as np  # noqa: E402
