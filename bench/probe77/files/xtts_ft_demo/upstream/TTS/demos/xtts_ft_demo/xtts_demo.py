import argparse
import gc
import os
import sys
import tempfile
import traceback

import gradio as gr
import pandas
import torch
import torchaudio
from faster_whisper import WhisperModel
from tqdm import tqdm

from TTS.demos.xtts_ft_demo.utils.formatter import list_audios, multilingual_cleaners
from TTS.demos.xtts_ft_demo.utils.gpt_train import train_gpt
from TTS.tts.configs.xtts_config import XttsConfig
from TTS.tts.models.xtts import Xtts


def clear_gpu_cache():
    # clear the GPU cache
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


XTTS_MODEL = None


def load_model(xtts_checkpoint, xtts_config, xtts_vocab):
    global XTTS_MODEL
    clear_gpu_cache()
    if not xtts_checkpoint or not xtts_config or not xtts_vocab:
        return "You need to run the previous steps or manually set the `XTTS checkpoint path`, `XTTS config path`, and `XTTS vocab path` fields !!"
    config = XttsConfig()
    config.load_json(xtts_config)
    XTTS_MODEL = Xtts.init_from_config(config)
    print("Loading XTTS model! ")
    XTTS_MODEL.load_checkpoint(config, checkpoint_path=xtts_checkpoint, vocab_path=xtts_vocab, use_deepspeed=False)
    if torch.cuda.is_available():
        XTTS_MODEL.cuda()

    print("Model Loaded!")
    return "Model Loaded!"


def run_tts(lang, tts_text, speaker_audio_file):
    if XTTS_MODEL is None or not speaker_audio_file:
        return "You need to run the previous step to load the model !!", None, None

    gpt_cond_latent, speaker_embedding = XTTS_MODEL.get_conditioning_latents(
        audio_path=speaker_audio_file,
        gpt_cond_len=XTTS_MODEL.config.gpt_cond_len,
        max_ref_length=XTTS_MODEL.config.max_ref_len,
        sound_norm_refs=XTTS_MODEL.config.sound_norm_refs,
    )
    out = XTTS_MODEL.inference(
        text=tts_text,
        language=lang,
        gpt_cond_latent=gpt_cond_latent,
        speaker_embedding=speaker_embedding,
        temperature=XTTS_MODEL.config.temperature,  # Add custom parameters here
        length_penalty=XTTS_MODEL.config.length_penalty,
        repetition_penalty=XTTS_MODEL.config.repetition_penalty,
        top_k=XTTS_MODEL.config.top_k,
        top_p=XTTS_MODEL.config.top_p,
    )

    with tempfile.NamedTemporaryFile(suffix=".wav", delete=False) as fp:
        out["wav"] = torch.tensor(out["wav"]).unsqueeze(0)
        out_path = fp.name
        torchaudio.save(out_path, out["wav"], 24000)

    return "Speech generated !", out_path, speaker_audio_file


def format_audio_list(audio_files, target_language="en", out_path=None, buffer=0.2, eval_percentage=0.15, speaker_name="coqui", gradio_progress=None):
    audio_total_size = 0
    # make sure that ooutput file exists
    os.makedirs(out_path, exist_ok=True)

    # Loading Whisper
    device = "cuda" if torch.cuda.is_available() else "cpu"

    print("Loading Whisper Model!")
    asr_model = WhisperModel("large-v2", device=device, compute_type="float16")

    metadata = {"audio_file": [], "text": [], "speaker_name": []}

    if gradio_progress is not None:
        tqdm_object = gradio_progress.tqdm(audio_files, desc="Formatting...")
    else:
        tqdm_object = tqdm(audio_files)

    for audio_path in tqdm_object:
        wav, sr = torchaudio.load(audio_path)
        # stereo to mono if needed
        if wav.size(0) != 1:
            wav = torch.mean(wav, dim=0, keepdim=True)

        wav = wav.squeeze()
        audio_total_size += wav.size(-1) / sr

        segments, _ = asr_model.transcribe(audio_path, word_timestamps=True, language=target_language)
        segments = list(segments)
        i = 0
        sentence = ""
        sentence_start = None
        first_word = True
        # added all segments words in a unique list
        words_list = []
        for _, segment in enumerate(segments):
            words = list(segment.words)
            words_list.extend(words)

        # process each word
        for word_idx, word in enumerate(words_list):
            if first_word:
                sentence_start = word.start
                # If it is the first sentence, add buffer or get the begining of the file
                if word_idx == 0:
                    sentence_start = max(sentence_start - buffer, 0)  # Add buffer to the sentence start
                else:
                    # get previous sentence end
                    previous_word_end = words_list[word_idx - 1].end
                    # add buffer or get the silence midle between the previous sentence and the current one
                    sentence_start = max(sentence_start - buffer, (previous_word_end + sentence_start) / 2)

                sentence = word.word
                first_word = False
            else:
                sentence += word.word

            if word.word[-1] in ["!", ".", "?"]:
                sentence = sentence[1:]
                # Expand number and abbreviations plus normalization
                sentence = multilingual_cleaners(sentence, target_language)
                audio_file_name, _ = os.path.splitext(os.path.basename(audio_path))
                audio_file = f"wavs/{audio_file_name}_{str(i).zfill(8)}.wav"

                # Check for the next word's existence
                if word_idx + 1 < len(words_list):
                    next_word_start = words_list[word_idx + 1].start
                else:
                    # If don't have more words it means that it is the last sentence then use the audio len as next word start
                    next_word_start = (wav.shape[0] - 1) / sr

                # Average the current word end and next word start
                word_end = min((word.end + next_word_start) / 2, word.end + buffer)

                absoulte_path = os.path.join(out_path, audio_file)
                os.makedirs(os.path.dirname(absoulte_path), exist_ok=True)
                i += 1
                first_word = True

                audio = wav[int(sr * sentence_start) : int(sr * word_end)].unsqueeze(0)
                # if the audio is too short ignore it (i.e < 0.33 seconds)
                if audio.size(-1) >= sr / 3:
                    torchaudio.save(absoulte_path, audio, sr)
                else:
                    continue

                metadata["audio_file"].append(audio_file)
                metadata["text"].append(sentence)
                metadata["speaker_name"].append(speaker_name)

    df = pandas.DataFrame(metadata)
    df = df.sample(frac=1)
    num_val_samples = int(len(df) * eval_percentage)

    df_eval = df[:num_val_samples]
    df_train = df[num_val_samples:]

    df_train = df_train.sort_values("audio_file")
    train_metadata_path = os.path.join(out_path, "metadata_train.csv")
    df_train.to_csv(train_metadata_path, sep="|", index=False)

    eval_metadata_path = os.path.join(out_path, "metadata_eval.csv")
    df_eval = df_eval.sort_values("audio_file")
    df_eval.to_csv(eval_metadata_path, sep="|", index=False)

    # deallocate VRAM and RAM
    del asr_model, df_train, df_eval, df, metadata
    gc.collect()

    return train_metadata_path, eval_metadata_path, audio_total_size


def preprocess_dataset(audio_path, language, out_path, progress=gr.Progress(track_tqdm=True)):
    clear_gpu_cache()
    out_path = os.path.join(out_path, "dataset")
    os.makedirs(out_path, exist_ok=True)
    if audio_path is None:
        return "You should provide one or multiple audio files! If you provided it, probably the upload of the files is not finished yet!", "", ""
    try:
        train_meta, eval_meta, audio_total_size = format_audio_list(
            audio_path, target_language=language, out_path=out_path, gradio_progress=progress
        )
    except:
        traceback.print_exc()
        error = traceback.format_exc()
        return f"The data processing was interrupted due an error !! Please check the console to verify the full error message! \n Error summary: {error}", "", ""

    clear_gpu_cache()

    # if audio total len is less than 2 minutes raise an error
    if audio_total_size < 120:
        message = "The sum of the duration of the audios that you provided should be at least 2 minutes!"
        print(message)
        return message, "", ""

    print("Dataset Processed!")
    return "Dataset Processed!", train_meta, eval_meta


def train_model(language, train_csv, eval_csv, num_epochs, batch_size, grad_acumm, output_path, max_audio_length):
    clear_gpu_cache()
    if not train_csv or not eval_csv:
        return "You need to run the data processing step or manually set `Train CSV` and `Eval CSV` fields !", "", "", "", ""
    try:
        # convert seconds to waveform frames
        max_audio_length = int(max_audio_length * 22050)
        config_path, original_xtts_checkpoint, vocab_file, exp_path, speaker_wav = train_gpt(
            language, num_epochs, batch_size, grad_acumm, train_csv, eval_csv, output_path=output_path, max_audio_length=max_audio_length
        )
    except:
        traceback.print_exc()
        error = traceback.format_exc()
        return f"The training was interrupted due an error !! Please check the console to check the full error message! \n Error summary: {error}", "", "", "", ""

    # copy original files to avoid parameters changes issues
    os.system(f"cp {config_path} {exp_path}")
    os.system(f"cp {vocab_file} {exp_path}")

    ft_xtts_checkpoint = os.path.join(exp_path, "best_model.pth")
    print("Model training done!")
    clear_gpu_cache()
    return "Model training done!", config_path, vocab_file, ft_xtts_checkpoint, speaker_wav


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="""XTTS fine-tuning demo\n\n"""
        """
        Example runs:
        python3 TTS/demos/xtts_ft_demo/xtts_demo.py --port
        """,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    parser.add_argument("--port", type=int, help="Port to run the gradio demo. Default: 5003", default=5003)
    parser.add_argument("--out_path", type=str, help="Output path (where data and checkpoints will be saved) Default: /tmp/xtts_ft/", default="/tmp/xtts_ft/")
    parser.add_argument("--num_epochs", type=int, help="Number of epochs to train. Default: 10", default=10)
    parser.add_argument("--batch_size", type=int, help="Batch size. Default: 4", default=4)
    parser.add_argument("--grad_acumm", type=int, help="Grad accumulation steps. Default: 1", default=1)
    parser.add_argument("--max_audio_length", type=int, help="Max permitted audio size in seconds. Default: 11", default=11)
    args = parser.parse_args()

    with gr.Blocks() as demo:
        with gr.Tab("1 - Data processing"):
            out_path = gr.Textbox(label="Output path (where data and checkpoints will be saved):", value=args.out_path)
            upload_file = gr.File(file_count="multiple", label="Select here the audio files that you want to use for XTTS trainining (Supported formats: wav, mp3, and flac)")
            lang = gr.Dropdown(label="Dataset Language", value="en", choices=["en", "es", "fr", "de", "it", "pt", "pl", "tr", "ru", "nl", "cs", "ar", "zh", "hu", "ko", "ja"])
            progress_data = gr.Label(label="Progress:")
            prompt_compute_btn = gr.Button(value="Step 1 - Create dataset")
            train_csv = gr.Textbox(label="Train CSV:")
            eval_csv = gr.Textbox(label="Eval CSV:")
            prompt_compute_btn.click(fn=preprocess_dataset, inputs=[upload_file, lang, out_path], outputs=[progress_data, train_csv, eval_csv])

        with gr.Tab("2 - Fine-tuning XTTS Encoder"):
            num_epochs = gr.Slider(label="Number of epochs:", minimum=1, maximum=100, step=1, value=args.num_epochs)
            batch_size = gr.Slider(label="Batch size:", minimum=2, maximum=512, step=1, value=args.batch_size)
            grad_acumm = gr.Slider(label="Grad accumulation steps:", minimum=2, maximum=128, step=1, value=args.grad_acumm)
            max_audio_length = gr.Slider(label="Max permitted audio size in seconds:", minimum=2, maximum=20, step=1, value=args.max_audio_length)
            progress_train = gr.Label(label="Progress:")
            xtts_config = gr.Textbox(label="XTTS config path:")
            xtts_vocab = gr.Textbox(label="XTTS vocab path:")
            xtts_checkpoint = gr.Textbox(label="XTTS checkpoint path:")
            speaker_reference_audio = gr.Textbox(label="Speaker reference audio:")
            train_btn = gr.Button(value="Step 2 - Run the training")
            train_btn.click(
                fn=train_model,
                inputs=[lang, train_csv, eval_csv, num_epochs, batch_size, grad_acumm, out_path, max_audio_length],
                outputs=[progress_train, xtts_config, xtts_vocab, xtts_checkpoint, speaker_reference_audio],
            )

        with gr.Tab("3 - Inference"):
            progress_load = gr.Label(label="Progress:")
            load_btn = gr.Button(value="Step 3 - Load Fine-tuned XTTS model")
            tts_language = gr.Dropdown(label="Language", value="en", choices=["en", "es", "fr", "de", "it", "pt", "pl", "tr", "ru", "nl", "cs", "ar", "zh", "hu", "ko", "ja"])
            tts_text = gr.Textbox(label="Input Text.", value="This model sounds really good and above all, it's reasonably fast.")
            tts_btn = gr.Button(value="Step 4 - Inference")
            tts_output_audio = gr.Audio(label="Generated Audio.")
            reference_audio = gr.Audio(label="Reference audio used.")
            load_btn.click(fn=load_model, inputs=[xtts_checkpoint, xtts_config, xtts_vocab], outputs=[progress_load])
            tts_btn.click(fn=run_tts, inputs=[tts_language, tts_text, speaker_reference_audio], outputs=[progress_load, tts_output_audio, reference_audio])

    demo.launch(share=True, debug=False, server_port=args.port, server_name="0.0.0.0")
