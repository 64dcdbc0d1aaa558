##################################################
# Sliding window segmentation of sensor-based activity data
##################################################
# Author: Marius Bock
##################################################

import numpy as np


def sliding_window_samples(data, samples_per_window, overlap_ratio):
    """
    Return a sliding window measured in number of samples over a data array.

    :param data: input array, can be numpy or pandas dataframe
    :param samples_per_window: window length as number of samples per window
    :param overlap_ratio: overlap is meant as percentage and should be an integer value
    :return: tuple of windows and indices
    """
    windows = []
    indices = []
    curr = 0
    win_len = int(samples_per_window)
    if overlap_ratio is not None:
        overlapping_elements = int((overlap_ratio / 100) * win_len)
        if overlapping_elements >= win_len:
            print('Number of overlapping elements exceeds window size.')
            return
    while curr < len(data) - win_len:
        windows.append(data[curr:curr + win_len])
        indices.append([curr, curr + win_len])
        curr = curr + win_len - overlapping_elements
    try:
        result_windows = np.array(windows)
        result_indices = np.array(indices)
    except Exception:
        result_windows = np.empty(shape=(len(windows), win_len, data.shape[1]), dtype=object)
        result_indices = np.array(indices)
        for i in range(0, len(windows)):
            result_windows[i] = windows[i]
            result_indices[i] = indices[i]
    return result_windows, result_indices


def sliding_window_seconds(data, length_in_seconds=1, sampling_rate=50, overlap_ratio=None):
    """
    Return a sliding window measured in seconds over a data array.
    """
    windows = []
    indices = []
    curr = 0
    overlapping_elements = 0
    win_len = int(length_in_seconds * sampling_rate)
    if overlap_ratio is not None:
        overlapping_elements = int((overlap_ratio / 100) * win_len)
        if overlapping_elements >= win_len:
            print('Number of overlapping elements exceeds window size.')
            return
    while curr < len(data) - win_len:
        windows.append(data[curr:curr + win_len])
        indices.append([curr, curr + win_len])
        curr = curr + win_len - overlapping_elements
    return np.array(windows), np.array(indices)


def apply_sliding_window(data_x, data_y, sliding_window_size, unit, sampling_rate, sliding_window_overlap):
    """
    Function which transforms a dataset into windows of a specific size and overlap.
    The label of a window is the label of its last sample (as done in the original DeepConvLSTM paper).

    :param data_x: numpy float array
    :param data_y: numpy float array
    :param sliding_window_size: integer or float value
    :param unit: 'units' or 'seconds'
    :param sampling_rate: integer, only used if unit == 'seconds'
    :param sliding_window_overlap: integer value, percentage of overlap
    """
    full_data = np.concatenate((data_x, data_y[:, None]), axis=1)
    output_x = None
    output_y = None

    for i, subject in enumerate(np.unique(full_data[:, 0])):
        subject_data = full_data[full_data[:, 0] == subject]
        subject_x, subject_y = subject_data[:, :-1], subject_data[:, -1]
        if unit == 'units':
            tmp_x, _ = sliding_window_samples(subject_x, sliding_window_size, sliding_window_overlap)
            tmp_y, _ = sliding_window_samples(subject_y, sliding_window_size, sliding_window_overlap)
        elif unit == 'seconds':
            tmp_x, _ = sliding_window_seconds(subject_x, sliding_window_size, sampling_rate, sliding_window_overlap)
            tmp_y, _ = sliding_window_seconds(subject_y, sliding_window_size, sampling_rate, sliding_window_overlap)
        else:
            raise ValueError('unknown unit {}'.format(unit))

        if output_x is None:
            output_x = tmp_x
            output_y = tmp_y
        else:
            output_x = np.concatenate((output_x, tmp_x), axis=0)
            output_y = np.concatenate((output_y, tmp_y), axis=0)

    output_y = [[i[-1]] for i in output_y]
    return output_x.astype(np.float32), np.array(output_y).flatten().astype(np.uint8)
