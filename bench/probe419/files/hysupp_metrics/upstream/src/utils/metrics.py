import logging

import numpy as np

log = logging.getLogger(__name__)

INTEGER_VALUES = ("H", "W", "M", "N", "L", "p")


class BaseMetric:
    def __init__(self):
        self.name = self.__class__.__name__

    @staticmethod
    def _check_input(X, Xref):
        assert X.shape == Xref.shape
        assert type(X) == type(Xref)
        return X, Xref

    def __call__(self, X, Xref):
        raise NotImplementedError

    def __repr__(self):
        return f"{self.name}"


class MeanAbsoluteError(BaseMetric):
    def __init__(self):
        super().__init__()

    def __call__(self, E, Eref):
        E, Eref = self._check_input(E, Eref)
        normE = np.linalg.norm(E, axis=0, keepdims=True)
        normEref = np.linalg.norm(Eref, axis=0, keepdims=True)
        return np.arccos((E / normE).T @ (Eref / normEref))


class SpectralAngleDistance(BaseMetric):
    def __init__(self):
        super().__init__()

    def __call__(self, E, Eref):
        E, Eref = self._check_input(E, Eref)
        normE = np.linalg.norm(E, axis=0)
        normEref = np.linalg.norm(Eref, axis=0)
        tmp = (E * Eref).sum(0) / (normE * normEref)
        # clip to avoid NaN due to rounding
        return np.arccos(np.clip(tmp, -1.0, 1.0))


class SADDegrees(SpectralAngleDistance):
    def __init__(self):
        super().__init__()

    def __call__(self, E, Eref):
        tmp = super().__call__(E, Eref)
        return np.rad2deg(tmp)


class MeanSquareError(BaseMetric):
    def __init__(self):
        super().__init__()

    def __call__(self, E, Eref):
        E, Eref = self._check_input(E, Eref)
        return np.sqrt(((E - Eref) ** 2).mean(1))


class aRMSE(BaseMetric):
    def __init__(self):
        super().__init__()

    def __call__(self, A, Aref):
        A, Aref = self._check_input(A, Aref)
        # Expect abundances to be in percentage points
        return 100 * np.sqrt(((A - Aref) ** 2).mean(-1))


class eRMSE(BaseMetric):
    def __init__(self):
        super().__init__()

    def __call__(self, E, Eref):
        E, Eref = self._check_input(E, Eref)
        return np.sqrt(((E - Eref) ** 2).mean(0))


class SRE(BaseMetric):
    def __init__(self):
        super().__init__()

    def __call__(self, X, Xref):
        X, Xref = self._check_input(X, Xref)
        return 20 * np.log10(np.linalg.norm(Xref, "fro") / np.linalg.norm(Xref - X, "fro"))


def compute_metric(metric, X_gt, X_hat, labels=None, detail=True, on_endmembers=False):
    """
    Return individual and global metric
    """
    d = {}
    d["Overall"] = round(metric(X_hat, X_gt).mean(), 4) if not isinstance(metric, SRE) \
        else round(metric(X_hat, X_gt), 4)
    if detail and not isinstance(metric, SRE):
        values = metric(X_hat, X_gt)
        labels = labels if labels is not None else [f"#{ii}" for ii in range(len(values))]
        for label, value in zip(labels, values):
            d[label] = round(value, 4)
    log.info(f"{metric} => {d}")
    return d
