"""Rossmann store sales with fastai's tabular learner.

Port of the course notebook (lesson 6, "rossmann") to a runnable script. The
feature engineering follows the 3rd place Kaggle solution (Guo & Berkhahn,
"Entity embeddings of categorical variables"); the model is fastai's
`tabular_learner` trained on one GPU.

    python rossmann.py --path ~/.fastai/data/rossmann --epochs 5 --bs 512
"""
import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from fastai.tabular.all import *

pd.options.mode.chained_assignment = None

CAT_VARS = ['Store', 'DayOfWeek', 'Year', 'Month', 'Day', 'StateHoliday', 'CompetitionMonthsOpen',
            'Promo2Weeks', 'StoreType', 'Assortment', 'PromoInterval', 'CompetitionOpenSinceYear', 'Promo2SinceYear',
            'State', 'Week', 'Events', 'Promo_fw', 'Promo_bw', 'StateHoliday_fw', 'StateHoliday_bw',
            'SchoolHoliday_fw', 'SchoolHoliday_bw']

CONT_VARS = ['CompetitionDistance', 'Max_TemperatureC', 'Mean_TemperatureC', 'Min_TemperatureC',
             'Max_Humidity', 'Mean_Humidity', 'Min_Humidity', 'Max_Wind_SpeedKm_h',
             'Mean_Wind_SpeedKm_h', 'CloudCover', 'trend', 'trend_DE',
             'AfterPromo', 'BeforePromo', 'Promo', 'SchoolHoliday']

DEP_VAR = 'Sales'


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def join_df(left, right, left_on, right_on=None, suffix='_y'):
    if right_on is None: right_on = left_on
    return left.merge(right, how='left', left_on=left_on, right_on=right_on,
                      suffixes=("", suffix))


def get_elapsed(df, fld, pre):
    day1 = np.timedelta64(1, 'D')
    last_date = np.datetime64()
    last_store = 0
    res = []
    for s, v, d in zip(df.Store.values, df[fld].values, df.Date.values):
        if s != last_store:
            last_date = np.datetime64()
            last_store = s
        if v: last_date = d
        res.append(((d - last_date).astype('timedelta64[D]') / day1))
    df[pre + fld] = res


def load_tables(path):
    table_names = ['train', 'store', 'store_states', 'state_names', 'googletrend', 'weather', 'test']
    tables = [pd.read_csv(path/f'{fname}.csv', low_memory=False) for fname in table_names]
    return tables


def build_joined(path):
    train, store, store_states, state_names, googletrend, weather, test = load_tables(path)
    train.StateHoliday = train.StateHoliday != '0'
    test.StateHoliday = test.StateHoliday != '0'

    weather = join_df(weather, state_names, "file", "StateName")
    googletrend['Date'] = googletrend.week.str.split(' - ', expand=True)[0]
    googletrend['State'] = googletrend.file.str.split('_', expand=True)[2]
    googletrend.loc[googletrend.State == 'NI', "State"] = 'HB,NI'

    train = add_datepart(train, "Date", drop=False)
    test = add_datepart(test, "Date", drop=False)
    googletrend = add_datepart(googletrend, "Date", drop=False)
    trend_de = googletrend[googletrend.file == 'Rossmann_DE']

    store = join_df(store, store_states, "Store")
    joined = join_df(train, store, "Store")
    joined_test = join_df(test, store, "Store")

    out = []
    for df in (joined, joined_test):
        df = join_df(df, googletrend, ["State", "Year", "Week"])
        df = df.merge(trend_de, 'left', ["Year", "Week"], suffixes=('', '_DE'))
        df = join_df(df, weather, ["State", "Date"])
        for c in df.columns:
            if c.endswith('_y'):
                if c in df.columns: df.drop(c, inplace=True, axis=1)
        df.CompetitionOpenSinceYear = df.CompetitionOpenSinceYear.fillna(1900).astype(np.int32)
        df.CompetitionOpenSinceMonth = df.CompetitionOpenSinceMonth.fillna(1).astype(np.int32)
        df.Promo2SinceYear = df.Promo2SinceYear.fillna(1900).astype(np.int32)
        df.Promo2SinceWeek = df.Promo2SinceWeek.fillna(1).astype(np.int32)
        df["CompetitionOpenSince"] = pd.to_datetime(dict(year=df.CompetitionOpenSinceYear,
                                                         month=df.CompetitionOpenSinceMonth, day=15))
        df["CompetitionDaysOpen"] = df.Date.subtract(df.CompetitionOpenSince).dt.days
        df.loc[df.CompetitionDaysOpen < 0, "CompetitionDaysOpen"] = 0
        df.loc[df.CompetitionOpenSinceYear < 1990, "CompetitionDaysOpen"] = 0
        df["CompetitionMonthsOpen"] = df["CompetitionDaysOpen"] // 30
        df.loc[df.CompetitionMonthsOpen > 24, "CompetitionMonthsOpen"] = 24
        df["Promo2Since"] = pd.to_datetime(df.apply(lambda x: Week(x.Promo2SinceYear, x.Promo2SinceWeek).monday()
                                                    if 'Week' in globals() else x.Date, axis=1))
        df["Promo2Days"] = df.Date.subtract(df["Promo2Since"]).dt.days
        df.loc[df.Promo2Days < 0, "Promo2Days"] = 0
        df.loc[df.Promo2SinceYear < 1990, "Promo2Days"] = 0
        df["Promo2Weeks"] = df["Promo2Days"] // 7
        df.loc[df.Promo2Weeks < 0, "Promo2Weeks"] = 0
        df.loc[df.Promo2Weeks > 25, "Promo2Weeks"] = 25
        out.append(df)
    return out


def add_event_features(df):
    columns = ["Date", "Store", "Promo", "StateHoliday", "SchoolHoliday"]
    df = df.sort_values(['Store', 'Date'])
    for c in columns[2:]:
        get_elapsed(df, c, 'After')
    df = df.sort_values(['Store', 'Date'], ascending=[True, False])
    for c in columns[2:]:
        get_elapsed(df, c, 'Before')
    return df


def exp_rmspe(preds, targs):
    "Root mean squared percentage error on the log-scale predictions"
    preds, targs = torch.exp(preds), torch.exp(targs)
    return torch.sqrt(((targs - preds) / targs) ** 2).mean()


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--path', type=Path, default=Path('~/.fastai/data/rossmann').expanduser())
    p.add_argument('--epochs', type=int, default=5)
    p.add_argument('--bs', type=int, default=512)
    p.add_argument('--lr', type=float, default=3e-3)
    p.add_argument('--gpu', type=int, default=0, help='which GPU to train on')
    p.add_argument('--seed', type=int, default=42)
    p.add_argument('--workers', type=int, default=4)
    args = p.parse_args()

    seed_everything(args.seed)
    torch.cuda.set_device(args.gpu)
    device = torch.device(f'cuda:{args.gpu}')

    cache = args.path/'joined.pkl'
    if cache.exists():
        train_df, test_df = pd.read_pickle(cache), pd.read_pickle(args.path/'joined_test.pkl')
    else:
        train_df, test_df = build_joined(args.path)
        train_df.to_pickle(cache); test_df.to_pickle(args.path/'joined_test.pkl')

    train_df = train_df[train_df.Sales != 0].copy()
    n = len(train_df)
    idx = np.argsort(train_df.Date.values)
    cut = train_df['Date'][(train_df['Date'] == train_df['Date'][len(test_df)])].index.max()
    splits = (list(range(cut, n)), list(range(cut)))

    train_df[DEP_VAR] = np.log(train_df[DEP_VAR])
    procs = [FillMissing, Categorify, Normalize]
    cat_vars = [c for c in CAT_VARS if c in train_df.columns]
    cont_vars = [c for c in CONT_VARS if c in train_df.columns]
    to = TabularPandas(train_df, procs, cat_vars, cont_vars, DEP_VAR, y_block=TransformBlock(),
                       splits=splits, reduce_memory=True)

    dls = to.dataloaders(bs=args.bs, num_workers=args.workers, device=device,
                         pin_memory=torch.cuda.is_available())
    max_log_y = np.log(1.2) + np.max(train_df[DEP_VAR])
    y_range = torch.tensor([0, max_log_y], device=device)

    learn = tabular_learner(dls, layers=[1000, 500], ps=[0.001, 0.01], embed_p=0.04,
                            y_range=y_range, metrics=exp_rmspe, loss_func=MSELossFlat())
    start = time.time()
    learn.fit_one_cycle(args.epochs, args.lr, wd=0.2)
    torch.cuda.synchronize()
    print(f"trained in {time.time()-start:.1f}s on {torch.cuda.get_device_name(args.gpu)}")

    test_to = to.new(test_df)
    test_to.process()
    test_dl = dls.valid.new(test_to)
    preds, _ = learn.get_preds(dl=test_dl)
    test_df[DEP_VAR] = np.exp(to_np(preds)).squeeze()
    test_df[['Id', DEP_VAR]].to_csv(args.path/'submission.csv', index=False)
    learn.export(args.path/'rossmann_learner.pkl')


if __name__ == '__main__':
    main()
