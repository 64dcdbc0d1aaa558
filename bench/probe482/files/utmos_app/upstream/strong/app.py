import gradio as gr
import torch
import torchaudio
import unicodedata

import lightning_module

# The demo runs on a free CPU space, so everything stays on the host.
model = lightning_module.BaselineLightningModule.load_from_checkpoint(
    "epoch=3-step=7459.ckpt", map_location="cpu"
).eval()


def calc_mos(audio_path):
    wav, sr = torchaudio.load(audio_path)
    osr = 16_000
    batch = wav.unsqueeze(0).repeat(10, 1, 1)
    csr = torchaudio.transforms.Resample(sr, osr)
    batch = csr(batch)
    batch = {
        'wav': batch,
        'domains': torch.zeros(10, dtype=torch.long),
        'judge_id': torch.ones(10, dtype=torch.long) * 288,
    }
    with torch.no_grad():
        output = model(batch)
    predic_mos = output.mean(dim=1).squeeze().detach().numpy().mean() * 2 + 3
    return predic_mos


description = """
MOS prediction demo using UTMOS-strong w/o phoneme encoder model, which is trained on the main track dataset.
This demo only accepts .wav format. Best at 16 kHz sampling rate.

Paper is available [here](https://arxiv.org/abs/2204.02152)
"""

iface = gr.Interface(
    fn=calc_mos,
    inputs=gr.Audio(type='filepath', label="Audio to evaluate"),
    outputs=gr.Textbox(placeholder="Predicted MOS", label="Predicted MOS"),
    title="UTMOS Demo",
    description=description,
    allow_flagging=False,
)
iface.launch()
