import logging

import torch


def calculate_multiquestion_loss(labels: torch.Tensor, predictions: torch.Tensor, question_index_groups, careful=True, sum_over_questions=False) -> torch.Tensor:
    """
    The full decision tree loss used for training GZ DECaLS models

    Negative log likelihood of observing ``labels`` (volunteer answers to all questions)
    from Dirichlet-Multinomial distributions for each question, using concentrations ``predictions``.

    Args:
        labels (torch.Tensor): (galaxy, k successes) where k successes dimension is indexed by question_index_groups.
        predictions (torch.Tensor): Dirichlet concentrations, matching shape of labels
        question_index_groups (list): Answer indices for each question i.e. [(question.start_index, question.end_index), ...] for all questions. Useful for slicing model predictions by question. See :ref:`schemas`.

    Returns:
        torch.Tensor: neg. log likelihood of shape (batch, question).
    """
    if careful:
        # some models give occasional nans for all predictions on a specific galaxy/row
        # these are inputs to the loss and only happen many epochs in so probably not a case of initial labels being nan
        # but rather a model diverging. To avoid NaN loss, replace with 1
        # very extremely rare, shouldn't affect much
        # also nans are sometimes returned when predictions are huge
        if torch.any(torch.isnan(predictions)):
            logging.warning('Found nan values in predictions: {}'.format(predictions))
        safety_value = torch.ones(1, device=predictions.device, dtype=predictions.dtype)  # fill with 1 everywhere
        predictions = torch.where(torch.isnan(predictions), safety_value, predictions)

    # very important that question_index_groups is fixed and discrete, else tf.function autograph will mess up
    q_losses = []
    # will give shape errors if model output dim is not labels dim, which can happen if losses.py substrings are missing an answer
    for q_n in range(len(question_index_groups)):
        q_indices = question_index_groups[q_n]
        q_start = q_indices[0]
        q_end = q_indices[1]
        q_loss = dirichlet_loss(labels[:, q_start:q_end + 1], predictions[:, q_start:q_end + 1])
        q_losses.append(q_loss)

    total_loss = torch.stack(q_losses, dim=1)

    if sum_over_questions:
        return torch.sum(total_loss, dim=1)  # sum over questions (dim 1) for per-galaxy loss
    return total_loss  # leave the reduction to pytorch lightning


# lgamma of half-precision concentrations overflows/underflows quickly, so under AMP
# the loss is always evaluated in fp32 (the decorator is a no-op when autocast is off)
@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
def dirichlet_loss(labels_for_q, concentrations_for_q):
    """
    Negative log likelihood of ``labels_for_q`` being drawn from Dirichlet-Multinomial distribution with ``concentrations_for_q`` concentrations.
    This loss is for one question. Sum over multiple questions if needed (assumes independent).
    Applied by :meth:`calculate_multiquestion_loss`, above.

    Args:
        labels_for_q (tf.constant): observed labels (count of volunteer responses) of shape (batch, answer)
        concentrations_for_q (tf.constant): concentrations for multinomial-dirichlet predicting the observed labels, of shape (batch, answer)

    Returns:
        tf.constant: negative log. prob per galaxy, of shape (batch_dim).
    """
    # if you get a dimension mismatch here like [16, 2] vs. [64, 2], for example, check --shard-img-size is correct in train_model.py.
    # images may be being reshaped to the wrong expected size e.g. if they are saved as 32x32, but you put --shard-img-size=64,
    # you will get image batches of shape [N/4, 64, 64, 1] and hence have the wrong number of images vs. labels (and meaningless images)
    # so check --shard-img-size carefully!
    total_count = torch.sum(labels_for_q, axis=1)

    # pytorch dirichlet multinomial implementation will not accept zero total votes, need to handle separately
    return get_dirichlet_neg_log_prob(labels_for_q, total_count, concentrations_for_q)


def get_dirichlet_neg_log_prob(labels_for_q, total_count, concentrations_for_q):
    # https://docs.pyro.ai/en/stable/_modules/pyro/distributions/conjugate.html#DirichletMultinomial
    # .log_prob is not implemented in torch.distributions, so write it ourselves
    # returns negative log prob i.e. loss
    log_prob = _dirichlet_multinomial_log_prob(concentrations_for_q, total_count, labels_for_q)
    return -log_prob  # we want to minimise neg log prob


def _dirichlet_multinomial_log_prob(concentration, total_count, value):
    alpha = concentration
    return _log_beta_1(alpha.sum(-1), value.sum(-1)) - _log_beta_1(alpha, value).sum(-1) \
        + torch.lgamma(total_count + 1) - torch.lgamma(value + 1).sum(-1) \
        - torch.lgamma(total_count + 1) + torch.lgamma(value.sum(-1) + 1)


def _log_beta_1(alpha, value, is_sparse=False):
    # copied from pyro
    if is_sparse:
        raise NotImplementedError
    return torch.lgamma(1 + value) + torch.lgamma(alpha) - torch.lgamma(value + alpha)


def beta_custom(a, b):
    # use the lgamma trick: B(a, b) = exp(lgamma(a) + lgamma(b) - lgamma(a + b))
    return torch.exp(torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a + b))


def vote_fraction_mse(labels, predictions, question_index_groups):
    """Simple alternative loss for debugging: squared error on vote fractions for each question."""
    losses = []
    for q_start, q_end in question_index_groups:
        counts = labels[:, q_start:q_end + 1]
        totals = counts.sum(dim=1, keepdim=True).clamp(min=1)
        fractions = counts / totals
        conc = predictions[:, q_start:q_end + 1]
        expected = conc / conc.sum(dim=1, keepdim=True)
        has_votes = (counts.sum(dim=1) > 0).float()
        losses.append(((expected - fractions) ** 2).sum(dim=1) * has_votes)
    return torch.stack(losses, dim=1)
