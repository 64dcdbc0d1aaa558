# -*- coding: utf-8 -*-
"""
@author: Gabriel Mittag, TU-Berlin
"""
import os
import datetime
from glob import glob
from pathlib import Path
import time

import numpy as np
import pandas as pd
import yaml
from tqdm import tqdm

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader

from . import NISQA_lib as NL


class nisqaModel(object):
    '''
    nisqaModel: Main class that loads the model and the datasets. Contains
    the training loop, prediction, and evaluation function.
    '''
    def __init__(self, args):
        self.args = args

        if 'mode' not in self.args:
            self.args['mode'] = 'main'

        self.runinfos = {}
        self._getDevice()
        self._loadModel()
        self._loadDatasets()
        self.args['now'] = datetime.datetime.today()

        if self.args['mode']=='main':
            print(yaml.dump(self.args, default_flow_style=None, sort_keys=False))

    def train(self):
        if self.args['dim']==True:
            raise NotImplementedError('NISQA_DIM training moved to nisqa/NISQA_DIM_model.py')
        self._train_mos()

    def evaluate(self, mapping='first_order', do_print=True, do_plot=False):
        self._evaluate_mos(mapping=mapping, do_print=do_print, do_plot=do_plot)

    def predict(self):
        print('---> Predicting ...')
        self._wrapParallel()

        y_val_hat, y_val = NL.predict_mos(
            self.model,
            self.ds_val,
            self.args['tr_bs_val'],
            self.dev,
            num_workers=self.args['tr_num_workers'])

        if self.args['output_dir']:
            self.ds_val.df['model'] = self.args['name']
            self.ds_val.df.to_csv(
                os.path.join(self.args['output_dir'], 'NISQA_results.csv'),
                index=False)

        if self.args['mode'] in ('predict_file', 'predict_dir'):
            print(self.ds_val.df.to_string(index=False))
        return self.ds_val.df

    def _wrapParallel(self):
        '''
        Multi-GPU inference/training via DataParallel if requested in the
        config (tr_parallel: true).
        '''
        if self.args['tr_parallel']:
            self.model = nn.DataParallel(self.model)

    def _train_mos(self):
        '''
        Trains speech quality model.
        '''
        # Initialize  -------------------------------------------------------------
        self._wrapParallel()
        self.model.to(self.dev)

        # Runname and savepath  ---------------------------------------------------
        self.runname = self._makeRunnameAndWriteYAML()

        # Optimizer  -------------------------------------------------------------
        opt = optim.Adam(self.model.parameters(), lr=self.args['tr_lr'])
        scheduler = optim.lr_scheduler.ReduceLROnPlateau(
                opt,
                'min',
                verbose=True,
                threshold=0.003,
                patience=self.args['tr_lr_patience'])
        earlyStp = NL.earlyStopper(self.args['tr_early_stop'])

        biasLoss = NL.biasLoss(
            self.ds_train.df.db,
            anchor_db=self.args['tr_bias_anchor_db'],
            mapping=self.args['tr_bias_mapping'],
            min_r=self.args['tr_bias_min_r'],
            do_print=(self.args['tr_verbose']>0),
            )

        # Dataloader    -------------------------------------------------------------
        dl_train = DataLoader(
            self.ds_train,
            batch_size=self.args['tr_bs'],
            shuffle=True,
            drop_last=False,
            pin_memory=True,
            num_workers=self.args['tr_num_workers'])

        # Start training loop   ---------------------------------------------------
        print('--> start training')
        for epoch in range(self.args['tr_epochs']):

            tic_epoch = time.time()
            batch_cnt = 0
            loss = 0.0
            y_train = self.ds_train.df[self.args['csv_mos_train']].to_numpy().reshape(-1)
            y_train_hat = np.zeros((len(self.ds_train), 1))

            self.model.train()

            # Progress bar
            if self.args['tr_verbose'] == 2:
                pbar = tqdm(iterable=batch_cnt, total=len(dl_train), ascii=">—",
                            bar_format='{bar} {percentage:3.0f}%, {n_fmt}/{total_fmt}, {elapsed}<{remaining}{postfix}')

            for xb_spec, yb_mos, (idx, n_wins) in dl_train:

                # Estimate batch ---------------------------------------------------
                xb_spec = xb_spec.to(self.dev)
                yb_mos = yb_mos.to(self.dev)
                n_wins = n_wins.to(self.dev)

                # Forward pass ----------------------------------------------------
                yb_mos_hat = self.model(xb_spec, n_wins)
                y_train_hat[idx] = yb_mos_hat.detach().cpu().numpy()

                # Loss ------------------------------------------------------------
                lossb = biasLoss.get_loss(yb_mos, yb_mos_hat, idx)

                # Backprop  -------------------------------------------------------
                lossb.backward()
                opt.step()
                opt.zero_grad()

                # Update total loss -----------------------------------------------
                loss += lossb.item()
                batch_cnt += 1

                if self.args['tr_verbose'] == 2:
                    pbar.set_postfix(loss=lossb.item())
                    pbar.update()

            if self.args['tr_verbose'] == 2:
                pbar.close()

            loss = loss/batch_cnt

            biasLoss.update_bias(y_train, y_train_hat)

            # Evaluate   -----------------------------------------------------------
            self.ds_train.df['mos_pred'] = y_train_hat
            db_results_train, r_train = eval_results(
                self.ds_train.df,
                dcon=self.ds_train.df_con,
                target_mos=self.args['csv_mos_train'],
                target_ci=self.args['csv_mos_train'] + '_ci',
                pred='mos_pred',
                mapping='first_order',
                do_print=False
                )

            NL.predict_mos(
                self.model,
                self.ds_val,
                self.args['tr_bs_val'],
                self.dev,
                num_workers=self.args['tr_num_workers'])

            db_results, r_val = eval_results(
                self.ds_val.df,
                dcon=self.ds_val.df_con,
                target_mos=self.args['csv_mos_val'],
                target_ci=self.args['csv_mos_val'] + '_ci',
                pred='mos_pred',
                mapping='first_order',
                do_print=False
                )

            r = {
                'train_r_p_mean_file': r_train['r_p_mean_file'],
                'train_rmse_map_mean_file': r_train['rmse_map_mean_file'],
                'r_p_mean_file': r_val['r_p_mean_file'],
                'rmse_map_mean_file': r_val['rmse_map_mean_file'],
                }

            # Scheduler update    ---------------------------------------------
            scheduler.step(loss)
            earl_stp = earlyStp.step(r)

            # Print    --------------------------------------------------------
            ep_runtime = time.time() - tic_epoch
            print(
                'ep {} sec {:0.0f} es {} lr {:0.0e} loss {:0.4f} // '
                'r_p_tr {:0.2f} rmse_map_tr {:0.2f} // r_p {:0.2f} rmse_map {:0.2f} // '
                'best_r_p {:0.2f} best_rmse_map {:0.2f},'
                .format(epoch+1, ep_runtime, earlyStp.cnt, NL.get_lr(opt), loss,
                        r['train_r_p_mean_file'], r['train_rmse_map_mean_file'],
                        r['r_p_mean_file'], r['rmse_map_mean_file'],
                        earlyStp.best_r_p, earlyStp.best_rmse))

            # Save results and model  -----------------------------------------
            self._saveResults(self.model, self.model_args, opt, epoch, loss, ep_runtime, r, db_results, earlyStp.best)

            # Early stopping    -----------------------------------------------
            if earl_stp:
                print('--> Early stopping. best_r_p {:0.2f} best_rmse {:0.2f}'
                    .format(earlyStp.best_r_p, earlyStp.best_rmse))
                return

        # Training done --------------------------------------------------------
        print('--> Training done. best_r_p {:0.2f} best_rmse {:0.2f}'
                            .format(earlyStp.best_r_p, earlyStp.best_rmse))
        return

    def _evaluate_mos(self, mapping='first_order', do_print=True, do_plot=False):
        print('--> Evaluating ...')
        self.db_results, self.r = eval_results(
            self.ds_val.df,
            dcon=self.ds_val.df_con,
            target_mos=self.args['csv_mos_val'],
            target_ci=self.args['csv_mos_val'] + '_ci',
            pred='mos_pred',
            mapping=mapping,
            do_print=do_print,
            do_plot=do_plot)

    def _makeRunnameAndWriteYAML(self):
        '''
        Creates individual run name and writes the arguments to a YAML file.
        '''
        runname = self.args['name'] + '_' + self.args['now'].strftime("%y%m%d_%H%M%S%f")
        print('runname: ' + runname)
        runpath = os.path.join(self.args['output_dir'], runname)
        Path(runpath).mkdir(parents=True, exist_ok=True)
        self.args['runpath'] = runpath
        with open(os.path.join(runpath, runname+'.yaml'), "w") as f:
            yaml.dump(self.args, f, default_flow_style=None, sort_keys=False)
        return runname

    def _loadDatasets(self):
        if self.args['mode']=='predict_file':
            self._loadDatasetsFile()
        elif self.args['mode']=='predict_dir':
            self._loadDatasetsFolder()
        elif self.args['mode']=='predict_csv':
            self._loadDatasetsCSVpredict()
        elif self.args['mode']=='main':
            self._loadDatasetsCSV()
        else:
            raise NotImplementedError('mode not available')

    def _loadDatasetsFolder(self):
        files = glob(os.path.join(self.args['data_dir'], '*.wav'))
        files = [os.path.basename(f) for f in files]
        df_val = pd.DataFrame(files, columns=['deg'])
        print('# files: {}'.format(len(df_val)))
        if len(df_val)==0:
            raise ValueError('No wav files found in data_dir')
        self.ds_val = self._makeDataset(df_val, self.args['data_dir'], 'deg', 'predict_only')

    def _loadDatasetsFile(self):
        data_dir = os.path.dirname(self.args['deg'])
        file_name = os.path.basename(self.args['deg'])
        df_val = pd.DataFrame([file_name], columns=['deg'])
        self.ds_val = self._makeDataset(df_val, data_dir, 'deg', 'predict_only')

    def _loadDatasetsCSVpredict(self):
        csv_file_path = os.path.join(self.args['data_dir'], self.args['csv_file'])
        dfile = pd.read_csv(csv_file_path)
        self.ds_val = self._makeDataset(dfile, self.args['data_dir'], self.args['csv_deg'], 'predict_only')

    def _loadDatasetsCSV(self):
        csv_file_path = os.path.join(self.args['data_dir'], self.args['csv_file'])
        dfile = pd.read_csv(csv_file_path)
        if not set(self.args['csv_db_train'] + self.args['csv_db_val']).issubset(dfile.db.unique().tolist()):
            missing_datasets = set(self.args['csv_db_train'] + self.args['csv_db_val']).difference(dfile.db.unique().tolist())
            raise ValueError('Not all dbs found in csv:', missing_datasets)
        df_train = dfile[dfile.db.isin(self.args['csv_db_train'])].reset_index()
        df_val = dfile[dfile.db.isin(self.args['csv_db_val'])].reset_index()
        if self.args['csv_con'] is not None:
            csv_con_path = os.path.join(self.args['data_dir'], self.args['csv_con'])
            dcon = pd.read_csv(csv_con_path)
            dcon_train = dcon[dcon.db.isin(self.args['csv_db_train'])].reset_index()
            dcon_val = dcon[dcon.db.isin(self.args['csv_db_val'])].reset_index()
        else:
            dcon_train = None
            dcon_val = None
        print('Training size: {}, Validation size: {}'.format(len(df_train), len(df_val)))
        self.ds_train = self._makeDataset(df_train, self.args['data_dir'], self.args['csv_deg'], self.args['csv_mos_train'], dcon_train)
        self.ds_val = self._makeDataset(df_val, self.args['data_dir'], self.args['csv_deg'], self.args['csv_mos_val'], dcon_val)

    def _makeDataset(self, df, data_dir, filename_column, mos_column, df_con=None):
        return NL.SpeechQualityDataset(
            df,
            df_con=df_con,
            data_dir=data_dir,
            filename_column=filename_column,
            mos_column=mos_column,
            seg_length=self.args['ms_seg_length'],
            max_length=self.args['ms_max_segments'],
            to_memory=self.args['tr_ds_to_memory'],
            to_memory_workers=self.args['tr_ds_to_memory_workers'],
            seg_hop_length=self.args['ms_seg_hop_length'],
            transform=None,
            ms_n_fft=self.args['ms_n_fft'],
            ms_hop_length=self.args['ms_hop_length'],
            ms_win_length=self.args['ms_win_length'],
            ms_n_mels=self.args['ms_n_mels'],
            ms_sr=self.args['ms_sr'],
            ms_fmax=self.args['ms_fmax'],
            ms_channel=self.args.get('ms_channel'),
            double_ended=self.args['double_ended'],
            dim=self.args['dim'],
            filename_column_ref=None,
            )

    def _loadModel(self):
        '''
        Loads the Pytorch models with given input arguments.
        '''
        # if True overwrite input arguments from pretrained model
        if self.args['pretrained_model']:
            if os.path.isabs(self.args['pretrained_model']):
                model_path = os.path.join(self.args['pretrained_model'])
            else:
                model_path = os.path.join(os.getcwd(), self.args['pretrained_model'])
            checkpoint = torch.load(model_path, map_location=self.dev)

            # update checkpoint arguments with new arguments
            checkpoint['args'].update(self.args)
            self.args = checkpoint['args']

        if self.args['model']=='NISQA_DIM':
            self.args['dim'] = True
            self.args['csv_mos_train'] = None
            self.args['csv_mos_val'] = None
        else:
            self.args['dim'] = False

        self.model_args = {
            'ms_seg_length': self.args['ms_seg_length'],
            'ms_n_mels': self.args['ms_n_mels'],
            'cnn_model': self.args['cnn_model'],
            'cnn_c_out_1': self.args['cnn_c_out_1'],
            'cnn_c_out_2': self.args['cnn_c_out_2'],
            'cnn_c_out_3': self.args['cnn_c_out_3'],
            'cnn_kernel_size': self.args['cnn_kernel_size'],
            'cnn_dropout': self.args['cnn_dropout'],
            'cnn_pool_1': self.args['cnn_pool_1'],
            'cnn_pool_2': self.args['cnn_pool_2'],
            'cnn_pool_3': self.args['cnn_pool_3'],
            'cnn_fc_out_h': self.args['cnn_fc_out_h'],
            'td': self.args['td'],
            'td_sa_d_model': self.args['td_sa_d_model'],
            'td_sa_nhead': self.args['td_sa_nhead'],
            'td_sa_pos_enc': self.args['td_sa_pos_enc'],
            'td_sa_num_layers': self.args['td_sa_num_layers'],
            'td_sa_h': self.args['td_sa_h'],
            'td_sa_dropout': self.args['td_sa_dropout'],
            'td_lstm_h': self.args['td_lstm_h'],
            'td_lstm_num_layers': self.args['td_lstm_num_layers'],
            'td_lstm_dropout': self.args['td_lstm_dropout'],
            'td_lstm_bidirectional': self.args['td_lstm_bidirectional'],
            'pool': self.args['pool'],
            'pool_att_h': self.args['pool_att_h'],
            'pool_att_dropout': self.args['pool_att_dropout'],
            }

        if self.args['model']=='NISQA':
            self.model = NL.NISQA(**self.model_args)
        else:
            raise NotImplementedError('Model not available')

        # Load weights if pretrained model is used ------------------------------------
        if self.args['pretrained_model']:
            missing_keys, unexpected_keys = self.model.load_state_dict(checkpoint['model_state_dict'], strict=True)
            print('Loaded pretrained model from ' + self.args['pretrained_model'])
            if missing_keys:
                print('missing_keys:')
                print(missing_keys)
            if unexpected_keys:
                print('unexpected_keys:')
                print(unexpected_keys)

    def _getDevice(self):
        '''
        Train on GPU if available.
        '''
        if self.args['tr_device'] is None:
            self.dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        else:
            self.dev = torch.device(self.args['tr_device'])

        print('Device: {}'.format(self.dev))

        if "tr_parallel" in self.args:
            if (self.dev==torch.device("cpu")) and self.args['tr_parallel']==True:
                self.args['tr_parallel']==False
                print('Using CPU -> tr_parallel set to False')

    def _saveResults(self, model, model_args, opt, epoch, loss, ep_runtime, r, db_results, best):
        '''
        Save model/results in dictionary and write results csv.
        '''
        if (self.args['tr_checkpoint'] == 'best_only'):
            filename = self.runname + '.tar'
        else:
            filename = self.runname + '__' + ('ep_{:03d}'.format(epoch+1)) + '.tar'
        run_output_dir = os.path.join(self.args['output_dir'], self.runname)
        model_path = os.path.join(run_output_dir, filename)
        results_path = os.path.join(run_output_dir, self.runname+'__results.csv')
        Path(run_output_dir).mkdir(parents=True, exist_ok=True)

        results = {
            'runname': self.runname,
            'epoch': '{:05d}'.format(epoch+1),
            'filename': filename,
            'loss': loss,
            'ep_runtime': '{:0.2f}'.format(ep_runtime),
            **self.runinfos,
            **r,
            **self.args,
            }

        for key in results:
            results[key] = str(results[key])

        if epoch==0:
            self.results_hist = pd.DataFrame(results, index=[0])
        else:
            self.results_hist.loc[epoch] = results
        self.results_hist.to_csv(results_path, index=False)

        if (self.args['tr_checkpoint'] == 'every_epoch') or ((self.args['tr_checkpoint'] == 'best_only') and best):
            if hasattr(model, 'module'):
                state_dict = model.module.state_dict()
                model_name = model.module.name
            else:
                state_dict = model.state_dict()
                model_name = model.name

            torch_dict = {
                'runname': self.runname,
                'epoch': epoch+1,
                'model_args': model_args,
                'args': self.args,
                'model_state_dict': state_dict,
                'optimizer_state_dict': opt.state_dict(),
                'db_results': db_results,
                'results': results,
                'model_name': model_name,
                }

            torch.save(torch_dict, model_path)


def eval_results(df, dcon=None, target_mos='mos', target_ci='mos_ci', pred='mos_pred',
                 mapping=None, do_print=False, do_plot=False):
    '''
    Evaluates a trained model on given dataset (per-database and mean over dbs).
    '''
    db_results_df = []
    df['y_hat_map'] = np.nan

    for db_name in df.db.astype("category").cat.categories:
        df_db = df.loc[df.db==db_name]
        y = df_db[target_mos].to_numpy()
        y_hat = df_db[pred].to_numpy()
        if mapping == 'first_order':
            b = NL.fit_first_order(y, y_hat)
            y_hat_map = NL.calc_mapped(y_hat, b)
            d = 1
        else:
            y_hat_map = y_hat
            d = 0
        df.loc[df.db==db_name, 'y_hat_map'] = y_hat_map
        ci = df_db[target_ci].to_numpy() if target_ci in df_db else None
        r = NL.calc_eval_metrics(y, y_hat, y_hat_map=y_hat_map, d=d, ci=ci)
        r['db'] = db_name
        r['n'] = len(df_db)
        db_results_df.append(r)
        if do_print:
            print('{}: r_p {:0.2f}, rmse_map {:0.2f}, n {}'.format(db_name, r['r_p'], r['rmse_map'], r['n']))

    db_results_df = pd.DataFrame(db_results_df)
    r_mean = {
        'r_p_mean_file': db_results_df.r_p.mean(),
        'rmse_map_mean_file': db_results_df.rmse_map.mean(),
        'rmse_star_map_mean_file': db_results_df.rmse_star_map.mean(),
        }
    if do_print:
        print('---> mean over dbs: r_p {:0.2f}, rmse_map {:0.2f}'.format(
            r_mean['r_p_mean_file'], r_mean['rmse_map_mean_file']))
    return db_results_df, r_mean
