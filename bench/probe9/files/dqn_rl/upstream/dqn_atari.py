"""Double DQN on Atari (Pong / Breakout) in the style of the RL-Adventure notebooks, as a script."""
import argparse
import math
import random
from collections import deque

import gym
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.autograd as autograd
import torch.nn.functional as F

from common.wrappers import make_atari, wrap_deepmind, wrap_pytorch

USE_CUDA = torch.cuda.is_available()
Variable = lambda *args, **kwargs: autograd.Variable(*args, **kwargs).cuda() if USE_CUDA else autograd.Variable(*args, **kwargs)
LongTensor = torch.cuda.LongTensor if USE_CUDA else torch.LongTensor


class ReplayBuffer(object):
    def __init__(self, capacity):
        self.buffer = deque(maxlen=capacity)

    def push(self, state, action, reward, next_state, done):
        state = np.expand_dims(state, 0)
        next_state = np.expand_dims(next_state, 0)
        self.buffer.append((state, action, reward, next_state, done))

    def sample(self, batch_size):
        state, action, reward, next_state, done = zip(*random.sample(self.buffer, batch_size))
        return np.concatenate(state), action, reward, np.concatenate(next_state), done

    def __len__(self):
        return len(self.buffer)


class CnnDQN(nn.Module):
    def __init__(self, input_shape, num_actions, dueling=True):
        super(CnnDQN, self).__init__()
        self.input_shape = input_shape
        self.num_actions = num_actions
        self.dueling = dueling
        self.features = nn.Sequential(
            nn.Conv2d(input_shape[0], 32, kernel_size=8, stride=4),
            nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=4, stride=2),
            nn.ReLU(),
            nn.Conv2d(64, 64, kernel_size=3, stride=1),
            nn.ReLU(),
        )
        self.advantage = nn.Sequential(nn.Linear(self.feature_size(), 512), nn.ReLU(), nn.Linear(512, num_actions))
        self.value = nn.Sequential(nn.Linear(self.feature_size(), 512), nn.ReLU(), nn.Linear(512, 1))

    def forward(self, x):
        x = self.features(x / 255.0)
        x = x.view(x.size(0), -1)
        advantage = self.advantage(x)
        if not self.dueling:
            return advantage
        value = self.value(x)
        return value + advantage - advantage.mean(1, keepdim=True)

    def feature_size(self):
        return self.features(autograd.Variable(torch.zeros(1, *self.input_shape))).view(1, -1).size(1)

    def act(self, state, epsilon):
        if random.random() > epsilon:
            with torch.no_grad():
                state = Variable(torch.FloatTensor(np.float32(state)).unsqueeze(0))
                q_value = self.forward(state)
                action = q_value.max(1)[1].item()
        else:
            action = random.randrange(self.num_actions)
        return action


def update_target(current_model, target_model):
    target_model.load_state_dict(current_model.state_dict())


def compute_td_loss(batch_size, replay_buffer, current_model, target_model, optimizer, gamma):
    state, action, reward, next_state, done = replay_buffer.sample(batch_size)

    state = Variable(torch.FloatTensor(np.float32(state)))
    next_state = Variable(torch.FloatTensor(np.float32(next_state)))
    action = LongTensor(action)
    reward = Variable(torch.FloatTensor(reward))
    done = Variable(torch.FloatTensor(done))

    q_values = current_model(state)
    with torch.no_grad():
        next_q_values = current_model(next_state)
        next_q_state_values = target_model(next_state)

    q_value = q_values.gather(1, action.unsqueeze(1)).squeeze(1)
    next_q_value = next_q_state_values.gather(1, torch.max(next_q_values, 1)[1].unsqueeze(1)).squeeze(1)
    expected_q_value = reward + gamma * next_q_value * (1 - done)

    loss = F.smooth_l1_loss(q_value, expected_q_value.detach())

    optimizer.zero_grad()
    loss.backward()
    for param in current_model.parameters():
        param.grad.data.clamp_(-1, 1)
    optimizer.step()
    return loss


def epsilon_by_frame(frame_idx, start=1.0, final=0.01, decay=30000):
    return final + (start - final) * math.exp(-1. * frame_idx / decay)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--env', default='PongNoFrameskip-v4')
    parser.add_argument('--frames', type=int, default=1_400_000)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--gamma', type=float, default=0.99)
    parser.add_argument('--replay_initial', type=int, default=10000)
    parser.add_argument('--replay_size', type=int, default=100000)
    parser.add_argument('--target_update', type=int, default=1000)
    parser.add_argument('--lr', type=float, default=1e-4)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--save', default='dqn_pong.pt')
    args = parser.parse_args()

    env = make_atari(args.env)
    env = wrap_deepmind(env, frame_stack=True)
    env = wrap_pytorch(env)
    env.seed(args.seed)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    current_model = CnnDQN(env.observation_space.shape, env.action_space.n)
    target_model = CnnDQN(env.observation_space.shape, env.action_space.n)
    if USE_CUDA:
        current_model = current_model.cuda()
        target_model = target_model.cuda()

    optimizer = optim.Adam(current_model.parameters(), lr=args.lr)
    replay_buffer = ReplayBuffer(args.replay_size)
    update_target(current_model, target_model)

    losses = []
    all_rewards = []
    episode_reward = 0
    best_mean = -float('inf')

    state = env.reset()
    for frame_idx in range(1, args.frames + 1):
        epsilon = epsilon_by_frame(frame_idx)
        action = current_model.act(state, epsilon)

        next_state, reward, done, _ = env.step(action)
        replay_buffer.push(state, action, reward, next_state, done)

        state = next_state
        episode_reward += reward

        if done:
            state = env.reset()
            all_rewards.append(episode_reward)
            episode_reward = 0
            mean_reward = np.mean(all_rewards[-20:])
            print(f'frame {frame_idx}  episodes {len(all_rewards)}  mean reward (20) {mean_reward:.2f}  eps {epsilon:.3f}')
            if len(all_rewards) >= 20 and mean_reward > best_mean:
                best_mean = mean_reward
                torch.save(current_model.state_dict(), args.save)

        if len(replay_buffer) > args.replay_initial:
            loss = compute_td_loss(args.batch_size, replay_buffer, current_model, target_model, optimizer, args.gamma)
            losses.append(loss.item())

        if frame_idx % args.target_update == 0:
            update_target(current_model, target_model)

    env.close()


if __name__ == '__main__':
    main()
