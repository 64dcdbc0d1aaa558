"""
FinRL paper trading demo: train a PPO agent (ElegantRL) on 1-minute Dow-30 bars,
back-test it on the following days and then trade it live on an Alpaca paper account.

    python FinRL_PaperTrading_Demo.py --mode train --gpu_id 0
    python FinRL_PaperTrading_Demo.py --mode test
    python FinRL_PaperTrading_Demo.py --mode trade --api_key ... --api_secret ...
"""
from __future__ import annotations

import argparse
import datetime
import threading
import time

import alpaca_trade_api as tradeapi
import gym
import numpy as np
import pandas as pd
import torch

from finrl.agents.elegantrl.models import DRLAgent as DRLAgent_erl
from finrl.config import INDICATORS
from finrl.config_tickers import DOW_30_TICKER
from finrl.meta.data_processor import DataProcessor
from finrl.meta.env_stock_trading.env_stocktrading_np import StockTradingEnv
from finrl.meta.paper_trading.common import AgentPPO

ERL_PARAMS = {
    "learning_rate": 3e-6,
    "batch_size": 2048,
    "gamma": 0.985,
    "seed": 312,
    "net_dimension": [128, 64],
    "target_step": 5000,
    "eval_gap": 30,
    "eval_times": 1,
}

API_BASE_URL = "https://paper-api.alpaca.markets"
DATA_API_BASE_URL = "https://data.alpaca.markets"


def get_device(gpu_id: int) -> torch.device:
    if gpu_id >= 0 and torch.cuda.is_available():
        print(f"| using GPU {gpu_id}: {torch.cuda.get_device_name(gpu_id)}")
        return torch.device(f"cuda:{gpu_id}")
    print("| CUDA not available, using CPU")
    return torch.device("cpu")


def download_and_process(start_date, end_date, ticker_list, time_interval, api_key, api_secret, if_vix=True):
    dp = DataProcessor("alpaca", API_KEY=api_key, API_SECRET=api_secret, API_BASE_URL=API_BASE_URL)
    data = dp.download_data(ticker_list, start_date, end_date, time_interval)
    data = dp.clean_data(data)
    data = dp.add_technical_indicator(data, INDICATORS)
    if if_vix:
        data = dp.add_vix(data)
    else:
        data = dp.add_turbulence(data)
    price_array, tech_array, turbulence_array = dp.df_to_array(data, if_vix)
    return price_array, tech_array, turbulence_array


def train(start_date, end_date, ticker_list, time_interval, cwd, gpu_id, break_step, api_key, api_secret):
    price_array, tech_array, turbulence_array = download_and_process(
        start_date, end_date, ticker_list, time_interval, api_key, api_secret
    )
    env_config = {
        "price_array": price_array,
        "tech_array": tech_array,
        "turbulence_array": turbulence_array,
        "if_train": True,
    }
    env_instance = StockTradingEnv(config=env_config)

    agent = DRLAgent_erl(
        env=StockTradingEnv,
        price_array=price_array,
        tech_array=tech_array,
        turbulence_array=turbulence_array,
    )
    model = agent.get_model("ppo", model_kwargs=ERL_PARAMS)
    model.learner_gpus = gpu_id  # ElegantRL Arguments: which card the learner uses
    trained_model = agent.train_model(model=model, cwd=cwd, total_timesteps=break_step)
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return trained_model


def test(start_date, end_date, ticker_list, time_interval, cwd, net_dimension, api_key, api_secret):
    price_array, tech_array, turbulence_array = download_and_process(
        start_date, end_date, ticker_list, time_interval, api_key, api_secret
    )
    env_config = {
        "price_array": price_array,
        "tech_array": tech_array,
        "turbulence_array": turbulence_array,
        "if_train": False,
    }
    env_instance = StockTradingEnv(config=env_config)
    episode_total_assets = DRLAgent_erl.DRL_prediction(
        model_name="ppo", cwd=cwd, net_dimension=net_dimension, environment=env_instance
    )
    returns = pd.Series(episode_total_assets).pct_change().dropna()
    sharpe = np.sqrt(252 * 390) * returns.mean() / (returns.std() + 1e-12)
    print(f"| test: final asset {episode_total_assets[-1]:.2f}, minute-Sharpe (annualised) {sharpe:.3f}")
    return episode_total_assets


class AlpacaPaperTrading:
    def __init__(self, ticker_list, time_interval, cwd, net_dim, state_dim, action_dim,
                 api_key, api_secret, tech_indicator_list, turbulence_thresh=30, max_stock=1e2,
                 latency=None, gpu_id=0):
        # load agent
        self.device = get_device(gpu_id)
        agent = AgentPPO(net_dim, state_dim, action_dim, gpu_id=gpu_id)
        actor = agent.act
        try:
            cwd = cwd + "/actor.pth"
            print(f"| load actor from: {cwd}")
            actor.load_state_dict(torch.load(cwd, map_location=self.device))
            self.act = actor.to(self.device)
            self.act.eval()
        except BaseException as error:
            raise ValueError("Fail to load agent!") from error

        # connect to Alpaca trading API
        try:
            self.alpaca = tradeapi.REST(api_key, api_secret, API_BASE_URL, "v2")
        except BaseException as error:
            raise ValueError("Fail to connect Alpaca. Please check account info and internet connection.") from error

        # read trading time interval
        if time_interval == "1s":
            self.time_interval = 1
        elif time_interval == "5s":
            self.time_interval = 5
        elif time_interval == "1Min":
            self.time_interval = 60
        elif time_interval == "5Min":
            self.time_interval = 60 * 5
        elif time_interval == "15Min":
            self.time_interval = 60 * 15
        else:
            raise ValueError("Time interval input is NOT supported yet.")

        # read trading settings
        self.tech_indicator_list = tech_indicator_list
        self.turbulence_thresh = turbulence_thresh
        self.max_stock = max_stock

        # initialize account
        self.stocks = np.asarray([0] * len(ticker_list))
        self.stocks_cd = np.zeros_like(self.stocks)
        self.cash = None
        self.stocks_df = pd.DataFrame(self.stocks, columns=["stocks"], index=ticker_list)
        self.asset_list = []
        self.price = np.asarray([0] * len(ticker_list))
        self.stockUniverse = ticker_list
        self.turbulence_bool = 0
        self.equities = []

    def test_latency(self, test_times=10):
        total_time = 0
        for i in range(0, test_times):
            time0 = time.time()
            self.get_state()
            time1 = time.time()
            temp_time = time1 - time0
            total_time += temp_time
        latency = total_time / test_times
        print("latency for data processing: ", latency)
        return latency

    def get_state(self):
        dp = DataProcessor(data_source="alpaca", api=self.alpaca)
        df = dp.fetch_latest_data(
            ticker_list=self.stockUniverse, time_interval="1Min", tech_indicator_list=self.tech_indicator_list
        )
        price, tech, turbulence = dp.df_to_array(df, self.tech_indicator_list, if_vix=True)
        self.price = price[-1]
        tech = tech[-1]
        turbulence_bool = 1 if turbulence[-1] >= self.turbulence_thresh else 0
        turbulence = (self.sigmoid_sign(turbulence[-1], self.turbulence_thresh) * 2**-5).astype(np.float32)
        tech = tech * 2**-7
        positions = self.alpaca.list_positions()
        stocks = [0] * len(self.stockUniverse)
        for position in positions:
            ind = self.stockUniverse.index(position.symbol)
            stocks[ind] = abs(int(float(position.qty)))

        stocks = np.asarray(stocks, dtype=float)
        cash = float(self.alpaca.get_account().cash)
        self.cash = cash
        self.stocks = stocks
        self.turbulence_bool = turbulence_bool

        amount = np.array(self.cash * (2**-12), dtype=np.float32)
        scale = np.array(2**-6, dtype=np.float32)
        state = np.hstack(
            (amount, turbulence, self.turbulence_bool, price[-1] * scale, self.stocks * scale, self.stocks_cd, tech)
        ).astype(np.float32)
        state[np.isnan(state)] = 0.0
        state[np.isinf(state)] = 0.0
        return state

    def trade(self):
        state = self.get_state()
        with torch.no_grad():
            s_tensor = torch.as_tensor((state,), device=self.device)
            a_tensor = self.act(s_tensor)
            action = a_tensor.detach().cpu().numpy()[0]
        action = (action * self.max_stock).astype(int)

        self.stocks_cd += 1
        if self.turbulence_bool == 0:
            min_action = 10  # stock_cd
            threads = []
            for index in np.where(action < -min_action)[0]:  # sell_index:
                sell_num_shares = min(self.stocks[index], -action[index])
                qty = abs(int(sell_num_shares))
                respSO = []
                tSubmitOrder = threading.Thread(
                    target=self.submitOrder, args=(qty, self.stockUniverse[index], "sell", respSO)
                )
                tSubmitOrder.start()
                threads.append(tSubmitOrder)
                self.cash = float(self.alpaca.get_account().cash)
                self.stocks_cd[index] = 0
            for x in threads:
                x.join()
        else:  # sell all when turbulence
            positions = self.alpaca.list_positions()
            for position in positions:
                orderSide = "sell" if position.side == "long" else "buy"
                qty = abs(int(float(position.qty)))
                respSO = []
                self.submitOrder(qty, position.symbol, orderSide, respSO)
            self.stocks_cd[:] = 0

    def submitOrder(self, qty, stock, side, resp):
        if qty > 0:
            try:
                self.alpaca.submit_order(stock, qty, side, "market", "day")
                print("Market order of | " + str(qty) + " " + stock + " " + side + " | completed.")
                resp.append(True)
            except BaseException:
                print("Order of | " + str(qty) + " " + stock + " " + side + " | did not go through.")
                resp.append(False)
        else:
            resp.append(True)

    @staticmethod
    def sigmoid_sign(ary, thresh):
        def sigmoid(x):
            return 1 / (1 + np.exp(-x * np.e)) - 0.5

        return sigmoid(ary / thresh) * thresh


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["train", "test", "trade"], default="train")
    parser.add_argument("--gpu_id", type=int, default=0, help="GPU used by the ElegantRL learner, -1 = CPU")
    parser.add_argument("--cwd", default="./papertrading_erl")
    parser.add_argument("--break_step", type=int, default=int(1e5))
    parser.add_argument("--api_key", default="")
    parser.add_argument("--api_secret", default="")
    args = parser.parse_args()

    ticker_list = DOW_30_TICKER
    action_dim = len(DOW_30_TICKER)
    state_dim = 1 + 2 + 3 * action_dim + len(INDICATORS) * action_dim

    if args.mode == "train":
        train(
            start_date="2022-08-25", end_date="2022-08-31", ticker_list=ticker_list, time_interval="1Min",
            cwd=args.cwd, gpu_id=args.gpu_id, break_step=args.break_step,
            api_key=args.api_key, api_secret=args.api_secret,
        )
    elif args.mode == "test":
        test(
            start_date="2022-09-01", end_date="2022-09-02", ticker_list=ticker_list, time_interval="1Min",
            cwd=args.cwd, net_dimension=ERL_PARAMS["net_dimension"],
            api_key=args.api_key, api_secret=args.api_secret,
        )
    else:
        paper_trading_erl = AlpacaPaperTrading(
            ticker_list=ticker_list, time_interval="1Min", cwd=args.cwd, net_dim=ERL_PARAMS["net_dimension"],
            state_dim=state_dim, action_dim=action_dim, api_key=args.api_key, api_secret=args.api_secret,
            tech_indicator_list=INDICATORS, turbulence_thresh=30, max_stock=1e2, gpu_id=args.gpu_id,
        )
        paper_trading_erl.test_latency()
        while True:
            paper_trading_erl.trade()
            time.sleep(paper_trading_erl.time_interval)


if __name__ == "__main__":
    main()
