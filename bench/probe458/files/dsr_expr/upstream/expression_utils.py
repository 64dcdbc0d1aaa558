###############################################################################
# General Information
###############################################################################
# Author: Daniel DiPietro | dandipietro.com | https://github.com/dandip

# expression_utils.py: Contains utility functions for converting sequences of
# tokens into executable PyTorch expressions, and for fitting the ephemeral
# constants of those expressions.

###############################################################################
# Dependencies
###############################################################################

import torch
import torch.nn as nn

###############################################################################
# Converting Sequence to Operators
###############################################################################

def sequence_to_infix(sequence, operators):
    """Converts a sequence of integer tokens to an infix string (for printing)
    """
    def infix(sequence, i):
        operator = operators[int(sequence[i])]
        arity = operators.arity(operator)
        if arity == 0:
            return operator.replace('var_', ''), i + 1
        elif arity == 1:
            arg, i = infix(sequence, i + 1)
            return f"{operator}({arg})", i
        else:
            left, i = infix(sequence, i + 1)
            right, i = infix(sequence, i)
            return f"({left} {operator} {right})", i
    s, _ = infix(sequence, 0)
    return s


class Expression(nn.Module):
    """A PyTorch module built from a pre-order token sequence.

    Ephemeral constants ('c') become nn.Parameters so that they can be
    optimized by optimize_constants().
    """

    def __init__(self, operators, sequence, length):
        super(Expression, self).__init__()
        self.operators = operators
        self.sequence = sequence[:length]
        self.length = length
        num_constants = len([x for x in self.sequence if operators[x] == 'c'])
        self.c = nn.Parameter(torch.ones(num_constants), requires_grad=True)
        self._infix = None

    def forward(self, x):
        x = x.to(self.c.device)
        c_iter = iter(range(self.c.shape[0]))

        def evaluate(i):
            operator = self.operators[self.sequence[i]]
            arity = self.operators.arity(operator)
            if operator == 'c':
                return self.c[next(c_iter)].expand(x.shape[0]), i + 1
            if operator.startswith('var_'):
                return x[:, self.operators.var(operator)], i + 1
            if arity == 0:
                return torch.full((x.shape[0],), float(operator), device=x.device), i + 1
            func = eval(self.operators.func(operator))
            if arity == 1:
                a, i = evaluate(i + 1)
                return func(a), i
            a, i = evaluate(i + 1)
            b, i = evaluate(i)
            return func(a, b), i

        out, _ = evaluate(0)
        return out

    def __str__(self):
        if self._infix is None:
            self._infix = sequence_to_infix(self.sequence, self.operators)
            if self.c.shape[0] > 0:
                consts = ", ".join(f"{v:.4f}" for v in self.c.detach().cpu().tolist())
                self._infix += f"  [c = {consts}]"
        return self._infix

    __repr__ = __str__

###############################################################################
# Optimizing Constants
###############################################################################

def optimize_constants(expressions, X_constants, y_constants, inner_lr, inner_num_epochs, inner_optimizer):
    """Optimizes constants of passed expressions (in-place)

    ~ Parameters ~
    - expressions (list of Expression): list of expressions to optimize
    - X_constants (Tensor): X dataset for optimizing constants
    - y_constants (Tensor): y dataset for optimizing constants
    - inner_lr (float): learning rate for optimizer
    - inner_num_epochs (int): number of epochs for optimizer
    - inner_optimizer ('lbfgs', 'adam', or 'rmsprop'): optimizer to use
    """
    for expression in expressions:
        if expression.c.shape[0] == 0:
            continue  # nothing to fit
        y_target = y_constants.to(expression.c.device)
        criterion = nn.MSELoss()
        if (inner_optimizer == 'lbfgs'):
            optim = torch.optim.LBFGS(expression.parameters(), lr=inner_lr)

            def closure():
                optim.zero_grad()
                y_pred = expression(X_constants)
                loss = criterion(y_pred, y_target)
                loss.backward()
                return loss

            for _ in range(inner_num_epochs):
                optim.step(closure)
            continue

        if (inner_optimizer == 'adam'):
            optim = torch.optim.Adam(expression.parameters(), lr=inner_lr)
        else:
            optim = torch.optim.RMSprop(expression.parameters(), lr=inner_lr)

        for _ in range(inner_num_epochs):
            optim.zero_grad()
            y_pred = expression(X_constants)
            loss = criterion(y_pred, y_target)
            if not torch.isfinite(loss):
                break  # diverged (e.g. log of a negative number); leave constants as they are
            loss.backward()
            optim.step()
