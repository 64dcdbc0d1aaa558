# MIT License

# Copyright (c) 2023 Replicable-MARL

# Permission is hereby granted, free of charge, to any person obtaining a copy
# of this software and associated documentation files (the "Software"), to deal
# in the Software without restriction, including without limitation the rights
# to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
# copies of the Software, and to permit persons to whom the Software is
# furnished to do so, subject to the following conditions:

# The above copyright notice and this permission notice shall be included in all
# copies or substantial portions of the Software.

import sys
import logging

import ray
import torch
from gym.spaces import Tuple
from ray import tune
from ray.rllib.models import ModelCatalog
from ray.tune import register_env
from ray.tune.utils import merge_dicts

from marllib.marl.algos.scripts import POlICY_REGISTRY
from marllib.marl.common import recursive_dict_update, dict_update
from marllib.envs.global_reward_env import COOP_ENV_REGISTRY as ENV_REGISTRY
from marllib.marl.algos.utils.log_dir_util import available_local_dir

logger = logging.getLogger(__name__)


def _clip_gpu_request(exp_info):
    """Ray Tune keeps a trial PENDING forever if it asks for more GPUs than the
    node advertises, which is a common way to lose a night of compute on a shared
    box. Clip the request to what torch can actually see."""
    requested = exp_info.get("num_gpus", 0)
    visible = torch.cuda.device_count()
    if requested > visible:
        logger.warning(
            "num_gpus=%s requested but only %s visible to torch, using %s",
            requested, visible, visible)
        exp_info["num_gpus"] = visible
    return exp_info


def run_vd(exp_info, env, model, stop=None):
    exp_info = _clip_gpu_request(exp_info)
    ray.init(local_mode=exp_info["local_mode"], num_gpus=exp_info["num_gpus"])

    ########################
    ### environment info ###
    ########################

    env_info = env.get_env_info()
    map_name = exp_info['env_args']['map_name']
    agent_name_ls = env.agents
    env_info["agent_name_ls"] = agent_name_ls
    env.close()

    ######################
    ### space checking ###
    ######################

    action_discrete = isinstance(env_info["space_act"], gym_discrete()) or \
        env_info["space_act"].__class__.__name__ == "MultiDiscrete"
    action_continues = env_info["space_act"].__class__.__name__ == "Box"

    if action_continues:
        raise ValueError("Value decomposition algorithms (IQL/VDN/QMIX) only support discrete action spaces, "
                         "got {}".format(env_info["space_act"]))

    ######################
    ### policy sharing ###
    ######################

    policy_mapping_info = env_info["policy_mapping_info"]

    if "all_scenario" in policy_mapping_info:
        policy_mapping_info = policy_mapping_info["all_scenario"]
    else:
        policy_mapping_info = policy_mapping_info[map_name]

    # grouping the agents for the joint Q policy
    space_obs = env_info["space_obs"].spaces
    space_act = env_info["space_act"]
    n_agents = env_info["num_agents"]
    obs_space = Tuple([env_info["space_obs"]] * n_agents)
    act_space = Tuple([env_info["space_act"]] * n_agents)

    grouping = {"group_1": agent_name_ls}

    # build the grouped environment
    env_reg_name = "grouped_" + exp_info["env"] + "_" + exp_info["env_args"]["map_name"]
    register_env(env_reg_name,
                 lambda _: ENV_REGISTRY[exp_info["env"]](exp_info["env_args"]).with_agent_groups(
                     grouping, obs_space=obs_space, act_space=act_space))

    #############
    ### model ###
    #############

    ModelCatalog.register_custom_model("Joint_Q_Model", model)

    ######################
    ### running config ###
    ######################

    running_config = {
        "seed": int(exp_info["seed"]),
        "env": env_reg_name,
        "num_gpus_per_worker": exp_info["num_gpus_per_worker"],
        "num_gpus": exp_info["num_gpus"],
        "num_workers": exp_info["num_workers"],
        "num_cpus_per_worker": exp_info["num_cpus_per_worker"],
        "framework": exp_info["framework"],
        "evaluation_interval": exp_info["evaluation_interval"],
        "simple_optimizer": False,  # force using better optimizer
    }

    stop_config = {
        "episode_reward_mean": exp_info["stop_reward"],
        "timesteps_total": exp_info["stop_timesteps"],
        "training_iteration": exp_info["stop_iters"],
    }

    stop_config = dict_update(stop_config, stop)

    restore_config = exp_info['restore_path']
    render_config = {
        "evaluation_interval": 1,
        "evaluation_num_episodes": 100,
        "evaluation_num_workers": 1,
        "evaluation_config": {
            "record_env": False,
            "render_env": True,
        }
    }

    running_config = recursive_dict_update(running_config, render_config) \
        if restore_config.get("render", False) else running_config

    exp_info["local_dir"] = available_local_dir(exp_info["local_dir"])

    ##################
    ### run script ###
    ##################

    results = POlICY_REGISTRY[exp_info["algorithm"]](model, exp_info, running_config, env_info, stop_config,
                                                     restore_config)
    ray.shutdown()

    return results


def gym_discrete():
    from gym.spaces import Discrete
    return Discrete
