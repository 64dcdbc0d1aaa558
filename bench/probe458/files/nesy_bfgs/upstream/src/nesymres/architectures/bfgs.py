import os
import time
import signal

import numpy as np
import sympy as sp
import torch
from scipy.optimize import minimize

from ..dataset.generator import Generator
from . import data
from ..utils import timeout


class TimedFun:
    def __init__(self, fun, stop_after=10):
        self.fun_in = fun
        self.started = False
        self.stop_after = stop_after

    def fun(self, x, *args):
        if self.started is False:
            self.started = time.time()
        elif abs(time.time() - self.started) >= self.stop_after:
            raise ValueError("Time is over.")
        self.fun_value = self.fun_in(*x, *args)
        self.x = x
        return self.fun_value


def bfgs(pred_str, X, y, cfg):
    """Fit the placeholder constants of a predicted skeleton with (restarted) BFGS.

    The skeleton comes back from the decoder as a tensor of token ids; the fit
    itself is done with sympy + scipy on the host, in float64.
    """
    # Check where dimensions not use, and replace them with 1 to avoid numerical issues with BFGS (i.e. absent variables placed in the denominator)
    y = y.squeeze()
    X = X.clone()
    bool_dim = (X == 0).all(axis=1).squeeze()
    X[:, :, bool_dim] = 1

    pred_str = pred_str[1:].tolist()
    # pred_str = [x if x<14 else x+1 for x in pred_str]
    raw = data.de_tokenize(pred_str, cfg.id2word)
    # if "constant" in prefix:
    #     for j in range(len(prefix)):
    #         if prefix[j] == "constant":
    #             prefix[j] = "c{}".format(j)
    if cfg.bfgs.add_coefficients_if_not_existing and "constant" not in raw:
        print("No constants in predicted expression. Attaching them everywhere")
        variables = {x: sp.Symbol(x, real=True, nonzero=True) for x in cfg.total_variables}
        infix = Generator.prefix_to_infix(raw, coefficients=cfg.total_coefficients, variables=cfg.total_variables)
        s = Generator.infix_to_sympy(infix, variables, cfg.rewrite_functions)
        placeholder = {x: sp.Symbol(x, real=True, nonzero=True) for x in ["cm", "ca"]}
        s = add_multiplicative_constants(s, placeholder["cm"], unary_operators=cfg.una_ops)
        s = add_additive_constants(s, placeholder, unary_operators=cfg.una_ops)
        s = s.subs(placeholder["cm"], 0.43)
        s = s.subs(placeholder["ca"], 0.421)
        s_simplified = data.constants_to_placeholder(s, symbol="constant")
        prefix = Generator.sympy_to_prefix(s_simplified)
        candidate = Generator.prefix_to_infix(prefix, coefficients=["constant"], variables=cfg.total_variables)
    else:
        candidate = Generator.prefix_to_infix(raw, coefficients=["constant"], variables=cfg.total_variables)

    if candidate.count("constant") == 0:
        return candidate, [], np.nan, candidate  # nothing to optimise

    c = 0
    expr = candidate
    for i in range(candidate.count("constant")):
        expr = expr.replace("constant", f"c{i}", 1)

    print("Constructing BFGS loss...")

    if cfg.bfgs.idx_remove:
        print("Flag idx remove ON, Removing indeces with high values...")
        bool_con = (X < 200).all(axis=2).squeeze()
        X = X[:, bool_con, :]
        # y = y[bool_con]

    max_y = np.max(np.abs(torch.abs(y).cpu().numpy()))
    print("checking input values range...")
    if max_y > 300:
        print("Attention, input values are very large. Optimizing may fail")
    if max_y > 300 and cfg.bfgs.normalization_o:
        print("Normalizing outputs")
        y = y / max_y
    if cfg.bfgs.normalization_type == "MSE":
        pass

    # the symbolic part runs on host memory; the encoder input may live on the GPU
    X = X.cpu()
    y = y.cpu()

    diffs = []
    for i in range(X.shape[1]):
        curr_expr = expr
        for idx, j in enumerate(cfg.total_variables):
            curr_expr = sp.sympify(curr_expr).subs(j, X[:, i, idx])
        diff = curr_expr - y[i]
        diffs.append(diff)
    if cfg.bfgs.normalization_o:
        diffs = [x / max_y for x in diffs]
    loss = np.mean(np.square(diffs))

    print("Loss constructed, starting new BFGS optmization...")

    # Lists where all restarted will be appended
    F_loss = []
    consts_ = []
    funcs = []
    symbols = {i: sp.Symbol(f"c{i}") for i in range(candidate.count("constant"))}
    for i in range(cfg.bfgs.n_restarts):
        # Compute number of coefficients
        x0 = np.random.randn(len(symbols))
        s = list(symbols.values())
        # bfgs optimization
        fun_timed = TimedFun(fun=sp.lambdify(s, loss, modules=["numpy"]), stop_after=cfg.bfgs.stop_time)
        if len(x0):
            minimize(fun_timed.fun, x0, method="BFGS")  # check consts interval and if they are int
            consts_.append(fun_timed.x)
        else:
            consts_.append([])
        final = expr
        for i in range(len(s)):
            final = sp.sympify(final).replace(s[i], fun_timed.x[i])
        if cfg.bfgs.normalization_o:
            funcs.append(max_y * final)
        else:
            funcs.append(final)

        values = {x: X[:, :, idx].cpu() for idx, x in enumerate(cfg.total_variables)}
        y_found = sp.lambdify(",".join(cfg.total_variables), final)(**values)
        final_loss = np.mean(np.square(y_found - y.cpu()).numpy())
        F_loss.append(final_loss)

    try:
        k_best = np.nanargmin(F_loss)
    except ValueError:
        print("All-Nan slice encountered")
        k_best = 0
    return funcs[k_best], consts_[k_best], F_loss[k_best], expr


def add_multiplicative_constants(expr, multiplicative_placeholder, unary_operators=[]):
    """
    Traverse the tree in post-order fashion and add multiplicative placeholders
    """
    begin = expr

    if not expr.args:
        if type(expr) == sp.core.numbers.NegativeOne:
            return expr
        else:
            return multiplicative_placeholder * expr
    for sub_expr in expr.args:
        expr = expr.subs(sub_expr, add_multiplicative_constants(sub_expr, multiplicative_placeholder, unary_operators=unary_operators))

    if str(type(expr)) in unary_operators:
        expr = multiplicative_placeholder * expr
    return expr


def add_additive_constants(expr, placeholders, unary_operators=[]):
    begin = expr
    if not expr.args:
        if type(expr) == sp.core.numbers.NegativeOne or str(expr) == str(placeholders["cm"]):
            return expr
        else:
            return placeholders["ca"] + expr
    for sub_expr in expr.args:
        expr = expr.subs(sub_expr, add_additive_constants(sub_expr, placeholders, unary_operators=unary_operators))

    if str(type(expr)) in unary_operators:
        expr = placeholders["ca"] + expr

    return expr
