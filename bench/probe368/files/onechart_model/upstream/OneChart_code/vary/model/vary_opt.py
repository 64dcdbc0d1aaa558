from typing import List, Optional, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import CrossEntropyLoss
from transformers import AutoConfig, AutoModelForCausalLM, \
    OPTConfig, OPTModel, OPTForCausalLM
from transformers.modeling_outputs import BaseModelOutputWithPast, CausalLMOutputWithPast

from vary.utils.constants import *
from vary.model.plug.blip_process import BlipImageEvalProcessor
from vary.model.vision_encoder.sam import build_sam_vit_b


class varyConfig(OPTConfig):
    model_type = "vary"


class varyOPTModel(OPTModel):
    config_class = varyConfig

    def __init__(self, config: OPTConfig):
        super(varyOPTModel, self).__init__(config)

        self.vision_tower = build_sam_vit_b()
        self.mm_projector = nn.Linear(1024, 768)

    def embed_tokens(self, x):
        return self.get_input_embeddings()(x)

    def initialize_vision_modules(
        self,
        vision_tower,
        pretrained_stage1_model=None,
        freeze_vision_tower=False,
        use_im_start_end=False,
        vision_select_layer=-1,
        dtype=torch.float16,
        device="cuda"
    ):
        image_processor_high = BlipImageEvalProcessor(image_size=1024)

        self.vision_tower = self.vision_tower.to(dtype=dtype, device=device)
        self.mm_projector = self.mm_projector.to(dtype=dtype, device=device)

        image_token_len = 256

        self.config.vision_tower = vision_tower
        self.config.image_token_len = image_token_len
        self.config.use_im_start_end = True
        self.config.vision_select_layer = vision_select_layer
        self.config.freeze_vision_tower = freeze_vision_tower

        return dict(
            image_processor_high=image_processor_high,
            image_token_len=image_token_len,
        )

    def forward(
        self,
        input_ids: torch.LongTensor = None,
        attention_mask: Optional[torch.Tensor] = None,
        past_key_values: Optional[List[torch.FloatTensor]] = None,
        inputs_embeds: Optional[torch.FloatTensor] = None,
        use_cache: Optional[bool] = None,
        output_attentions: Optional[bool] = None,
        output_hidden_states: Optional[bool] = None,
        images: Optional[torch.FloatTensor] = None,
        return_dict: Optional[bool] = None,
    ) -> Union[Tuple, BaseModelOutputWithPast]:

        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)

        vision_tower = getattr(self, 'vision_tower', None)
        im_start_token = getattr(self.config, "im_start_token", -1)

        if input_ids.shape[1] != 1 or self.training:
            use_im_start_end = getattr(self.config, "use_im_start_end", -1)
            vision_select_layer = getattr(self.config, "vision_select_layer", -1)
            im_patch_token = getattr(self.config, "im_patch_token", -1)
            im_end_token = getattr(self.config, "im_end_token", -1)
            freeze_vision_tower = getattr(self.config, "freeze_vision_tower", False)

            image_features = []

            for image in images:
                P, C, H, W = image[1].shape
                if P == 1:
                    with torch.set_grad_enabled(False):
                        cnn_feature = vision_tower(image[1])
                        cnn_feature = cnn_feature.flatten(2).permute(0, 2, 1)  # 256*1024
                    image_feature = self.mm_projector(cnn_feature)
                    image_features.append(image_feature)
                else:
                    raise NotImplementedError("OneChart only takes a single 1024x1024 view per chart")

            dummy_image_features = torch.zeros(256, 1024, device=inputs_embeds.device, dtype=inputs_embeds.dtype)
            dummy_image_features = self.mm_projector(dummy_image_features)
            use_im_start_end = True
            new_input_embeds = []
            for cur_input_ids, cur_input_embeds, cur_image_features in zip(input_ids, inputs_embeds, image_features):
                if (cur_input_ids == im_patch_token).sum() == 0:
                    # multimodal LLM, but the current sample is not multimodal
                    cur_input_embeds = cur_input_embeds + (0. * dummy_image_features).sum()
                    new_input_embeds.append(cur_input_embeds)
                    continue

                if use_im_start_end:
                    if (cur_input_ids == im_start_token).sum() != (cur_input_ids == im_end_token).sum():
                        raise ValueError("The number of image start tokens and image end tokens should be the same.")

                    image_start_tokens = torch.where(cur_input_ids == im_start_token)[0]
                    for image_start_token_pos, per_cur_image_features in zip(image_start_tokens, cur_image_features):
                        per_cur_image_features = per_cur_image_features.to(device=cur_input_embeds.device)
                        num_patches = per_cur_image_features.shape[0]

                        if cur_input_ids[image_start_token_pos + num_patches + 1] != im_end_token:
                            raise ValueError("The image end token should follow the image start token.")

                        cur_input_embeds = torch.cat(
                            (
                                cur_input_embeds[:image_start_token_pos + 1],
                                per_cur_image_features,
                                cur_input_embeds[image_start_token_pos + num_patches + 1:]
                            ),
                            dim=0
                        )

                    new_input_embeds.append(cur_input_embeds)
                else:
                    raise NotImplementedError

            inputs_embeds = torch.stack(new_input_embeds, dim=0)

        return super(varyOPTModel, self).forward(
            input_ids=None, attention_mask=attention_mask, past_key_values=past_key_values,
            inputs_embeds=inputs_embeds, use_cache=use_cache,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states,
            return_dict=return_dict
        )


class varyOPTForCausalLM(OPTForCausalLM):
    config_class = varyConfig
    # supports_gradient_checkpointing = True

    def __init__(self, config):
        super(OPTForCausalLM, self).__init__(config)
        self.model = varyOPTModel(config)

        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

        # auxiliary number decoder: regresses the normalized chart values from the <Number> token
        self.num_decoder = nn.Sequential(
            nn.Linear(config.hidden_size, config.hidden_size // 2),
            nn.ReLU(),
            nn.Linear(config.hidden_size // 2, config.hidden_size // 2),
            nn.ReLU(),
            nn.Linear(config.hidden_size // 2, 256),
        )
        self.pred_locs = []

        # Initialize weights and apply final processing
        self.post_init()

    def get_model(self):
        return self.model

    def forward(
        self,
        input_ids: torch.LongTensor = None,
        attention_mask: Optional[torch.Tensor] = None,
        past_key_values: Optional[List[torch.FloatTensor]] = None,
        inputs_embeds: Optional[torch.FloatTensor] = None,
        labels: Optional[torch.LongTensor] = None,
        use_cache: Optional[bool] = None,
        output_attentions: Optional[bool] = None,
        output_hidden_states: Optional[bool] = None,
        images: Optional[torch.FloatTensor] = None,
        return_dict: Optional[bool] = None,
        loc_labels=None,
    ) -> Union[Tuple, CausalLMOutputWithPast]:
        output_attentions = output_attentions if output_attentions is not None else self.config.output_attentions
        output_hidden_states = (
            output_hidden_states if output_hidden_states is not None else self.config.output_hidden_states
        )
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict

        outputs = self.model(
            input_ids=input_ids,
            past_key_values=past_key_values,
            attention_mask=attention_mask,
            inputs_embeds=inputs_embeds,
            use_cache=use_cache,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            images=images,
            return_dict=return_dict
        )

        hidden_states = outputs[0]
        logits = self.lm_head(hidden_states).contiguous()

        number_token_id = self.config.number_token
        loss = None
        if labels is not None:
            # Shift so that tokens < n predict n
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            # Flatten the tokens
            loss_fct = CrossEntropyLoss()
            shift_logits = shift_logits.view(-1, self.config.vocab_size)
            shift_labels = shift_labels.view(-1)
            # Enable model parallelism
            shift_labels = shift_labels.to(shift_logits.device)
            loss = loss_fct(shift_logits, shift_labels)

            if loc_labels is not None and len(loc_labels) > 0:
                number_mask = (input_ids == number_token_id)
                num_hidden = hidden_states[number_mask]
                pred_locs = self.num_decoder(num_hidden).sigmoid()
                gt_locs = torch.zeros(pred_locs.shape, device='cuda', dtype=pred_locs.dtype)
                loc_mask = torch.zeros(pred_locs.shape, device=pred_locs.device, dtype=torch.bool)
                for i, loc in enumerate(loc_labels):
                    n = min(len(loc), 256)
                    gt_locs[i, :n] = torch.as_tensor(loc[:n], dtype=pred_locs.dtype)
                    loc_mask[i, :n] = True
                loss_loc = F.l1_loss(pred_locs[loc_mask], gt_locs[loc_mask])
                loss = loss + loss_loc
        else:
            if input_ids.shape[1] == 1 and input_ids[0, 0] == number_token_id:
                # generation step that just produced <Number>: decode the values once
                self.pred_locs = self.num_decoder(hidden_states[:, -1]).sigmoid()[0].float().tolist()

        if not return_dict:
            output = (logits,) + outputs[1:]
            return (loss,) + output if loss is not None else output

        return CausalLMOutputWithPast(
            loss=loss,
            logits=logits,
            past_key_values=outputs.past_key_values,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )

    def prepare_inputs_for_generation(
        self, input_ids, past_key_values=None, attention_mask=None, inputs_embeds=None, **kwargs
    ):
        if past_key_values:
            input_ids = input_ids[:, -1:]

        # if `inputs_embeds` are passed, we only want to use them in the 1st generation step
        if inputs_embeds is not None and past_key_values is None:
            model_inputs = {"inputs_embeds": inputs_embeds}
        else:
            model_inputs = {"input_ids": input_ids}

        model_inputs.update(
            {
                "past_key_values": past_key_values,
                "use_cache": kwargs.get("use_cache"),
                "attention_mask": attention_mask,
                "images": kwargs.get("images", None),
            }
        )
        return model_inputs

    def initialize_vision_tokenizer(
        self,
        tokenizer,
        freeze_lm_model=False,
        pretrained_stage1_model=None,
        device='cuda'
    ):
        config = self.get_model().config

        self.resize_token_embeddings(len(tokenizer))

        config.im_patch_token = 50265
        config.use_im_start_end = True
        config.number_token = tokenizer.convert_tokens_to_ids(["<Number>"])[0]

        if config.use_im_start_end:
            self.resize_token_embeddings(len(tokenizer))
            config.im_start_token, config.im_end_token = 50266, 50267


AutoConfig.register("vary", varyConfig)
AutoModelForCausalLM.register(varyConfig, varyOPTForCausalLM)
