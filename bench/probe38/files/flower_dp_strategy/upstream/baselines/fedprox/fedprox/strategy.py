"""FedProx baseline strategies.

Server-side code only ever sees NumPy arrays: clients run their local epochs on
whatever accelerator they have (GPU or CPU) and ship back ``NDArrays``. The
aggregation, the straggler handling and the optional central-DP noise below
therefore never touch a torch device.
"""

from functools import reduce
from logging import INFO, WARNING
from typing import Callable, Dict, List, Optional, Tuple, Union

import numpy as np
from flwr.common import (
    EvaluateRes,
    FitIns,
    FitRes,
    MetricsAggregationFn,
    NDArrays,
    Parameters,
    Scalar,
    ndarrays_to_parameters,
    parameters_to_ndarrays,
)
from flwr.common.logger import log
from flwr.server.client_manager import ClientManager
from flwr.server.client_proxy import ClientProxy
from flwr.server.strategy import FedAvg


def weighted_average(metrics: List[Tuple[int, Dict[str, Scalar]]]) -> Dict[str, Scalar]:
    """Aggregate evaluation accuracies, weighted by number of examples."""
    accuracies = [float(num_examples * m["accuracy"]) for num_examples, m in metrics]
    examples = [num_examples for num_examples, _ in metrics]
    return {"accuracy": int(sum(accuracies)) / int(sum(examples))}


def aggregate_ndarrays(results: List[Tuple[NDArrays, int]]) -> NDArrays:
    """Compute weighted average of layer-wise NumPy updates."""
    num_examples_total = sum(num_examples for _, num_examples in results)
    weighted_weights = [[layer * num_examples for layer in weights] for weights, num_examples in results]
    weights_prime: NDArrays = [
        reduce(np.add, layer_updates) / num_examples_total for layer_updates in zip(*weighted_weights)
    ]
    return weights_prime


def _global_l2_norm(update: NDArrays) -> float:
    return float(np.sqrt(sum(np.sum(np.square(layer)) for layer in update)))


class FedProxWithStragglers(FedAvg):
    """FedAvg server loop for FedProx experiments.

    A fraction of the sampled clients is told (through the fit config) to behave as
    stragglers and run fewer local epochs; ``drop_stragglers`` decides whether their
    partial work is aggregated (FedProx) or discarded (FedAvg baseline).
    """

    def __init__(
        self,
        *,
        proximal_mu: float = 0.01,
        stragglers_fraction: float = 0.9,
        drop_stragglers: bool = False,
        dp_noise_multiplier: float = 0.0,
        dp_clip_norm: float = 0.0,
        seed: int = 2023,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.proximal_mu = proximal_mu
        self.stragglers_fraction = stragglers_fraction
        self.drop_stragglers = drop_stragglers
        self.dp_noise_multiplier = dp_noise_multiplier
        self.dp_clip_norm = dp_clip_norm
        self.rng = np.random.default_rng(seed)
        self.current_weights: Optional[NDArrays] = None

    def __repr__(self) -> str:
        return f"FedProxWithStragglers(mu={self.proximal_mu}, drop={self.drop_stragglers})"

    def initialize_parameters(self, client_manager: ClientManager) -> Optional[Parameters]:
        params = super().initialize_parameters(client_manager)
        if params is not None:
            self.current_weights = parameters_to_ndarrays(params)
        return params

    def configure_fit(
        self, server_round: int, parameters: Parameters, client_manager: ClientManager
    ) -> List[Tuple[ClientProxy, FitIns]]:
        client_instructions = super().configure_fit(server_round, parameters, client_manager)
        stragglers = self.rng.binomial(1, self.stragglers_fraction, len(client_instructions))
        out = []
        for (client, fit_ins), is_straggler in zip(client_instructions, stragglers):
            cfg = dict(fit_ins.config)
            cfg["proximal_mu"] = self.proximal_mu
            cfg["curr_round"] = server_round
            cfg["drop_client"] = bool(is_straggler) and self.drop_stragglers
            cfg["straggler"] = bool(is_straggler)
            out.append((client, FitIns(fit_ins.parameters, cfg)))
        return out

    def _clip_and_noise(self, results: List[Tuple[NDArrays, int]]) -> List[Tuple[NDArrays, int]]:
        """Central DP with fixed clipping of each client's *update* (not its weights)."""
        if self.dp_noise_multiplier <= 0.0 or self.current_weights is None:
            return results
        clipped = []
        for weights, n in results:
            update = [w - g for w, g in zip(weights, self.current_weights)]
            norm = _global_l2_norm(update)
            factor = min(1.0, self.dp_clip_norm / (norm + 1e-12))
            clipped.append(([g + u * factor for g, u in zip(self.current_weights, update)], n))
        std = self.dp_noise_multiplier * self.dp_clip_norm / len(clipped)
        agg = aggregate_ndarrays(clipped)
        return [([a + self.rng.normal(0.0, std, size=a.shape).astype(a.dtype) for a in agg], 1)]

    def aggregate_fit(
        self,
        server_round: int,
        results: List[Tuple[ClientProxy, FitRes]],
        failures: List[Union[Tuple[ClientProxy, FitRes], BaseException]],
    ) -> Tuple[Optional[Parameters], Dict[str, Scalar]]:
        if not results:
            return None, {}
        if not self.accept_failures and failures:
            return None, {}

        kept = []
        for _, fit_res in results:
            if fit_res.metrics.get("dropped", False):
                continue
            kept.append((parameters_to_ndarrays(fit_res.parameters), fit_res.num_examples))
        if not kept:
            log(WARNING, "round %s: every client was dropped as a straggler", server_round)
            return None, {}

        kept = self._clip_and_noise(kept)
        new_weights = aggregate_ndarrays(kept)
        self.current_weights = new_weights
        log(INFO, "round %s: aggregated %s updates", server_round, len(kept))

        metrics: Dict[str, Scalar] = {"num_aggregated": len(kept)}
        if self.fit_metrics_aggregation_fn:
            fit_metrics = [(res.num_examples, res.metrics) for _, res in results]
            metrics.update(self.fit_metrics_aggregation_fn(fit_metrics))
        return ndarrays_to_parameters(new_weights), metrics

    def aggregate_evaluate(
        self,
        server_round: int,
        results: List[Tuple[ClientProxy, EvaluateRes]],
        failures: List[Union[Tuple[ClientProxy, EvaluateRes], BaseException]],
    ) -> Tuple[Optional[float], Dict[str, Scalar]]:
        loss, metrics = super().aggregate_evaluate(server_round, results, failures)
        if loss is not None:
            log(INFO, "round %s: federated eval loss %.4f", server_round, loss)
        return loss, metrics
