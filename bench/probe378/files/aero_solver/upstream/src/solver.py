import json
import logging
import os
import time

import torch
import torch.nn.functional as F
import wandb

from src.ddp import distrib
from src.data.datasets import match_signal
from src.enhance import enhance
from src.evaluate import evaluate
from src.log_results import log_results
from src.models.discriminators import discriminator_loss, feature_loss, generator_loss
from src.models.stft_loss import MultiResolutionSTFTLoss
from src.models.spec import spectro
from src.utils import bold, copy_state, pull_metric, serialize_model, swap_state, LogProgress

logger = logging.getLogger(__name__)

GENERATOR_KEY = 'generator'
GENERATOR_OPTIMIZER_KEY = 'optimizer'
METRICS_KEY_EVALUATION_LOSS = 'evaluation_loss'
METRICS_KEY_BEST_LOSS = 'best_loss'

METRICS_KEY_LSD = 'Average lsd'
METRICS_KEY_VISQOL = 'Average visqol'

BEST_STATE_KEY = 'best_state'


class Solver(object):
    def __init__(self, data, models, optimizers, args):
        self.tr_loader = data['tr_loader']
        self.cv_loader = data['cv_loader']
        self.tt_loader = data['tt_loader']
        self.args = args

        self.adversarial_mode = 'adversarial' in args.experiment and args.experiment.adversarial

        self.models = models
        self.dmodels = {k: distrib.wrap(model) for k, model in models.items()}
        self.model = self.models['generator']
        self.dmodel = self.dmodels['generator']

        self.optimizers = optimizers
        self.optimizer = optimizers['optimizer']
        if self.adversarial_mode:
            self.disc_optimizers = {'disc_optimizer': optimizers['disc_optimizer']}

        # data augment
        self.device = args.device
        self.epochs = args.epochs

        # Checkpoints
        self.continue_from = args.continue_from
        self.eval_every = args.eval_every
        self.cross_valid = args.cross_valid
        self.cross_valid_every = args.cross_valid_every
        self.checkpoint = args.checkpoint
        if self.checkpoint:
            self.checkpoint_file = os.path.join(args.checkpoint_file)
            self.best_file = os.path.join(args.best_file)
            logger.debug("Checkpoint will be saved to %s", self.checkpoint_file.resolve()
                         if hasattr(self.checkpoint_file, 'resolve') else self.checkpoint_file)
        self.history_file = args.history_file

        self.best_states = None
        self.restart = args.restart
        self.history = []  # Keep track of loss
        self.samples_dir = args.samples_dir  # Where to save samples

        self.num_prints = args.num_prints  # Number of times to log per epoch

        if 'stft' in self.args.losses:
            self.mrstftloss = MultiResolutionSTFTLoss(factor_sc=args.stft_sc_factor,
                                                      factor_mag=args.stft_mag_factor).to(self.device)

        self._reset()

    def _copy_models_states(self):
        states = {}
        for name, model in self.models.items():
            states[name] = copy_state(model.state_dict())
        return states

    def _serialize_models(self):
        serialized_models = {}
        for name, model in self.models.items():
            serialized_models[name] = serialize_model(model)
        return serialized_models

    def _serialize_optimizers(self):
        serialized_optimizers = {}
        for name, optimizer in self.optimizers.items():
            serialized_optimizers[name] = optimizer.state_dict()
        return serialized_optimizers

    def _serialize(self):
        package = {}
        package['models'] = self._serialize_models()
        package['optimizers'] = self._serialize_optimizers()
        package['history'] = self.history
        package['best_states'] = self.best_states
        package['args'] = self.args
        tmp_path = str(self.checkpoint_file) + ".tmp"
        torch.save(package, tmp_path)
        # renaming is sort of atomic on UNIX (not really true on NFS)
        # but still less chances of leaving a half written checkpoint behind.
        os.rename(tmp_path, self.checkpoint_file)

        # Saving only the latest best model.
        models = package['models']
        for model_name, best_state in package['best_states'].items():
            models[model_name]['state'] = best_state
            model_filename = model_name + '_' + self.best_file
            tmp_path = os.path.join(os.path.dirname(self.best_file), model_filename) + ".tmp"
            torch.save(models[model_name], tmp_path)
            model_path = os.path.join(os.path.dirname(self.best_file), model_filename)
            os.rename(tmp_path, model_path)

    def _load(self, package, load_best=False):
        if load_best:
            for name, model_package in package['best_states']['models'].items():
                self.models[name].load_state_dict(model_package['state'])
        else:
            for name, model_package in package['models'].items():
                self.models[name].load_state_dict(model_package['state'])
            for name, opt_package in package['optimizers'].items():
                self.optimizers[name].load_state_dict(opt_package)

    def _reset(self):
        """_reset."""
        load_from = None
        load_best = False
        keep_history = True
        # Reset
        if self.checkpoint and os.path.exists(self.checkpoint_file) and not self.restart:
            load_from = self.checkpoint_file
        elif self.continue_from:
            load_from = self.continue_from
            load_best = self.args.continue_best
            keep_history = self.args.keep_history

        if load_from:
            logger.info(f'Loading checkpoint model: {load_from}')
            package = torch.load(load_from, 'cpu')
            self._load(package, load_best)
            if keep_history:
                self.history = package['history']
            self.best_states = package['best_states']

    def train(self):
        # Optimizing the model
        if self.history:
            logger.info("Replaying metrics from previous run")
        for epoch, metrics in enumerate(self.history):
            info = " ".join(f"{k.capitalize()}={v:.5f}" for k, v in metrics.items())
            logger.info(f"Epoch {epoch + 1}: {info}")

        logger.info('-' * 70)
        logger.info("Trainable Params:")
        for name, model in self.models.items():
            n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
            mb = n_params * 4 / 2 ** 20
            logger.info(f"{name}: parameters: {n_params}, size: {mb} MB")

        best_loss = None
        for epoch in range(len(self.history), self.epochs):
            # Train one epoch
            self.model.train()
            start = time.time()
            logger.info('-' * 70)
            logger.info("Training...")
            losses = self._run_one_epoch(epoch)
            logger_msg = f'Train Summary | End of Epoch {epoch + 1} | Time {time.time() - start:.2f}s | ' \
                         + ' | '.join([f'{k} Loss {v:.5f}' for k, v in losses.items()])
            logger.info(bold(logger_msg))
            if torch.cuda.is_available():
                peak = torch.cuda.max_memory_allocated() / 2 ** 30
                logger.info(f'Peak GPU memory this epoch: {peak:.2f} GiB')
                torch.cuda.reset_peak_memory_stats()
            losses = {k + '_loss': v for k, v in losses.items()}
            valid_losses = {}
            evaluation_loss = None

            if self.cv_loader is not None and self.cross_valid and \
                    ((epoch + 1) % self.cross_valid_every == 0 or epoch == self.epochs - 1):
                # Cross validation
                cross_valid_start = time.time()
                logger.info('-' * 70)
                logger.info('Cross validation...')
                self.model.eval()
                with torch.no_grad():
                    valid_losses = self._run_one_epoch(epoch, cross_valid=True)
                evaluation_loss = valid_losses['evaluation']
                logger_msg = f'Validation Summary | End of Epoch {epoch + 1} | Time {time.time() - cross_valid_start:.2f}s | ' \
                             + ' | '.join([f'{k} Valid Loss {v:.5f}' for k, v in valid_losses.items()])
                logger.info(bold(logger_msg))
                valid_losses = {'valid_' + k + '_loss': v for k, v in valid_losses.items()}

                best_loss = min(pull_metric(self.history, 'valid') + [evaluation_loss])
                # Save the best model
                if evaluation_loss == best_loss:
                    logger.info(bold('New best valid loss %.4f'), evaluation_loss)
                    self.best_states = self._copy_models_states()

            metrics = {**losses, **valid_losses}
            if evaluation_loss:
                metrics.update({METRICS_KEY_EVALUATION_LOSS: evaluation_loss})
            if best_loss:
                metrics.update({METRICS_KEY_BEST_LOSS: best_loss})

            # evaluate and enhance samples every 'eval_every' argument number of epochs
            # also evaluate on last epoch
            if self.tt_loader is not None and ((epoch + 1) % self.eval_every == 0 or epoch == self.epochs - 1):
                # Evaluate on the testset
                logger.info('-' * 70)
                logger.info('Evaluating on the test set...')
                # We switch to the best known model for testing
                with swap_state(self.model, self.best_states['generator']):
                    evaluation_start = time.time()
                    lsd, visqol = evaluate(self.args, self.tt_loader, epoch, self.model)
                    logger.info(f'Evaluation Time {time.time() - evaluation_start:.2f}s')
                    metrics.update({METRICS_KEY_LSD: lsd, METRICS_KEY_VISQOL: visqol})
                    enhance(self.tt_loader, self.model, self.args)

            wandb.log(metrics, step=epoch)
            self.history.append(metrics)
            info = " | ".join(f"{k.capitalize()} {v:.5f}" for k, v in metrics.items())
            logger.info('-' * 70)
            logger.info(bold(f"Overall Summary | Epoch {epoch + 1} | {info}"))

            if distrib.rank == 0:
                json.dump(self.history, open(self.history_file, "w"), indent=2)
                # Save model each epoch
                if self.checkpoint:
                    self._serialize()
                    logger.debug("Checkpoint saved to %s", self.checkpoint_file)

    def _run_one_epoch(self, epoch, cross_valid=False):
        total_losses = {}
        total_loss = 0
        data_loader = self.tr_loader if not cross_valid else self.cv_loader

        # get a different order for distributed training, otherwise this will get ignored
        data_loader.epoch = epoch

        label = ["Train", "Valid"][cross_valid]
        name = label + f" | Epoch {epoch + 1}"
        logprog = LogProgress(logger, data_loader, updates=self.num_prints, name=name)

        return_spec = 'return_spec' in self.args.experiment and self.args.experiment.return_spec

        for i, data in enumerate(logprog):
            lr, hr = [x.to(self.device) for x in data]

            if return_spec:
                pr_time, pr_spec = self.dmodel(lr, return_spec=return_spec)
                hr_spec = self.dmodel._spec(hr, scale=True)
            else:
                pr_time = self.dmodel(lr)
                pr_spec = None
                hr_spec = None

            hr_reprs = {'time': hr, 'spec': hr_spec}
            pr_reprs = {'time': pr_time, 'spec': pr_spec}

            losses = self._get_losses(hr_reprs, pr_reprs)
            total_generator_loss = 0
            for loss_name, loss in losses['generator'].items():
                total_generator_loss += loss

            # optimize model in training mode
            if not cross_valid:
                self._optimize(total_generator_loss)
                if self.adversarial_mode:
                    self._optimize_adversarial(losses['discriminator'])

            total_loss += total_generator_loss.item()
            for loss_name, loss in losses['generator'].items():
                total_loss_name = 'generator_' + loss_name
                if total_loss_name in total_losses:
                    total_losses[total_loss_name] += loss.item()
                else:
                    total_losses[total_loss_name] = loss.item()

            logprog.update(total_loss=format(total_loss / (i + 1), ".5f"))
            # Just in case, clear some memory
            if cross_valid:
                del pr_time, hr
        avg_losses = {'total': total_loss / (i + 1)}
        avg_losses.update({'evaluation': total_loss / (i + 1)} if cross_valid else {})
        for loss_name, loss in total_losses.items():
            avg_losses.update({loss_name: loss / (i + 1)})

        return avg_losses

    def _get_losses(self, hr, pr):
        hr_time = hr['time']
        pr_time = pr['time']
        hr_time, pr_time = match_signal(hr_time, pr_time)
        losses = {'generator': {}, 'discriminator': {}}
        with torch.autograd.set_detect_anomaly(True):
            if 'l1' in self.args.losses:
                losses['generator'].update({'l1': F.l1_loss(pr_time, hr_time)})
            if 'l2' in self.args.losses:
                losses['generator'].update({'l2': F.mse_loss(pr_time, hr_time)})
            if 'stft' in self.args.losses:
                sc, mag = self.mrstftloss(pr_time.squeeze(1), hr_time.squeeze(1))
                losses['generator'].update({'stft': sc + mag})
            if self.adversarial_mode:
                if 'msd' in self.args.experiment.discriminator_models:
                    generator_losses, discriminator_loss_val = self._get_msd_losses(pr_time, hr_time)
                    losses['generator'].update(generator_losses)
                    losses['discriminator'].update({'msd': discriminator_loss_val})
        return losses

    def _get_msd_losses(self, pr, hr):
        msd = self.dmodels['msd']
        y_ds_hat_r, y_ds_hat_g, fmap_s_r, fmap_s_g = msd(hr, pr)
        loss_fm = feature_loss(fmap_s_r, fmap_s_g)
        loss_gen, _ = generator_loss(y_ds_hat_g)
        y_ds_hat_r, y_ds_hat_g, _, _ = msd(hr, pr.detach())
        disc_loss, _, _ = discriminator_loss(y_ds_hat_r, y_ds_hat_g)
        return {'msd_gen': loss_gen, 'msd_fm': loss_fm}, disc_loss

    def _optimize(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def _optimize_adversarial(self, discriminator_losses):
        total_disc_loss = sum(list(discriminator_losses.values()))
        disc_optimizer = self.disc_optimizers['disc_optimizer']
        disc_optimizer.zero_grad()
        total_disc_loss.backward()
        disc_optimizer.step()
