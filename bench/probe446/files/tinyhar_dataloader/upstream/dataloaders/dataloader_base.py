import os
import pickle
import random

import numpy as np
import pandas as pd
from sklearn.preprocessing import StandardScaler


freq1 = 0.3
freq2 = 20


class BASE_DATA():
    """
    Base class of all datasets. Subclasses implement load_all_the_data() and fill
    self.data_x / self.data_y (pandas frames indexed by sub_id) plus the cross-validation keys.
    """
    def __init__(self, args):
        self.root_path = args.root_path
        self.freq_save_path = os.path.join(args.to_save_path, 'freq_data')
        self.window_save_path = os.path.join(args.to_save_path, 'window_data')
        os.makedirs(self.window_save_path, exist_ok=True)
        self.data_name = args.data_name
        self.windowsize = args.windowsize
        self.displacement = args.displacement
        self.exp_mode = args.exp_mode
        self.sampling_freq = args.sampling_freq
        self.sensor_select = args.sensor_select

        self.data_x, self.data_y = self.load_all_the_data(self.root_path)
        self.col_names = list(self.data_x.columns)[1:-1]

        if self.sensor_select is not None:
            self.col_names = [c for c in self.col_names if any(s in c for s in self.sensor_select)]
            self.data_x = self.data_x[['sub_id'] + self.col_names + ['sub']]

        self.train_slidingwindows = self.get_the_sliding_index(self.data_x.copy(), self.data_y.copy(), 'train')
        self.test_slidingwindows = self.get_the_sliding_index(self.data_x.copy(), self.data_y.copy(), 'test')

        if self.exp_mode in ['LOCV', 'SOCV', 'FOCV']:
            self.num_of_cv = len(self.LOCV_keys)
            self.index_of_cv = 0
        else:
            self.num_of_cv = 1

    def load_all_the_data(self, root_path):
        raise NotImplementedError

    def update_train_val_test_keys(self):
        if self.exp_mode in ['Given', 'SOCV', 'FOCV']:
            self.train_keys = self.train_keys
            self.test_keys = self.test_keys
        else:
            self.test_keys = self.LOCV_keys[self.index_of_cv]
            self.train_keys = [key for key in self.all_keys if key not in self.test_keys]
            self.index_of_cv = self.index_of_cv + 1

        train_vali_x = self.data_x[self.data_x['sub'].isin(self.train_keys)].copy()
        test_x = self.data_x[self.data_x['sub'].isin(self.test_keys)].copy()

        # standardise with statistics of the training subjects only
        self.normalized_data_x = self.normalization(train_vali_x, test_x)

        train_vali_window_index = [w for w in self.train_slidingwindows if w[0] in self.train_keys]
        random.shuffle(train_vali_window_index)
        split = int(0.9 * len(train_vali_window_index))
        self.train_window_index = train_vali_window_index[:split]
        self.vali_window_index = train_vali_window_index[split:]
        self.test_window_index = [w for w in self.test_slidingwindows if w[0] in self.test_keys]

    def normalization(self, train_vali, test=None):
        train_vali_sensors = train_vali.iloc[:, 1:-1]
        scaler = StandardScaler()
        scaler.fit(train_vali_sensors)
        normalized_train_vali = pd.DataFrame(scaler.transform(train_vali_sensors),
                                             columns=train_vali_sensors.columns,
                                             index=train_vali_sensors.index)
        train_vali = pd.concat([train_vali.iloc[:, 0], normalized_train_vali, train_vali.iloc[:, -1]], axis=1)
        if test is None:
            return train_vali
        test_sensors = test.iloc[:, 1:-1]
        normalized_test = pd.DataFrame(scaler.transform(test_sensors),
                                       columns=test_sensors.columns,
                                       index=test_sensors.index)
        test = pd.concat([test.iloc[:, 0], normalized_test, test.iloc[:, -1]], axis=1)
        return pd.concat([train_vali, test])

    def get_the_sliding_index(self, data_x, data_y, flag='train'):
        save_file = os.path.join(self.window_save_path,
                                 '{}_{}_{}_{}.pickle'.format(self.data_name, flag, self.windowsize, self.displacement))
        if os.path.exists(save_file):
            with open(save_file, 'rb') as handle:
                return pickle.load(handle)

        data_y = data_y.reset_index()
        data_x['activity_id'] = data_y['activity_id'].values
        freq = int(self.displacement if flag == 'train' else self.windowsize / 2)

        window_index = []
        for sub_id in data_x['sub_id'].unique():
            sub_x = data_x[data_x['sub_id'] == sub_id]
            sub = sub_x['sub'].iloc[0]
            start = sub_x.index[0]
            end = sub_x.index[-1]
            while start + self.windowsize <= end:
                # windows that contain the drop label are skipped
                if (sub_x.loc[start:start + self.windowsize - 1, 'activity_id'] != 'drop').all():
                    window_index.append([sub, start, start + self.windowsize])
                start = start + freq

        with open(save_file, 'wb') as handle:
            pickle.dump(window_index, handle, protocol=pickle.HIGHEST_PROTOCOL)
        return window_index
