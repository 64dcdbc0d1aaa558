import gradio as gr
import torch
from diffusers import AudioLDM2Pipeline


# make Space compatible with CPU duplicates
if torch.cuda.is_available():
    device = "cuda"
    torch_dtype = torch.float16
else:
    device = "cpu"
    torch_dtype = torch.float32

# load the diffusers pipeline
repo_id = "cvssp/audioldm2"
pipe = AudioLDM2Pipeline.from_pretrained(repo_id, torch_dtype=torch_dtype).to(device)
# pipe.unet = torch.compile(pipe.unet)

# set the generator for reproducibility
generator = torch.Generator(device)


def text2audio(text, negative_prompt, audio_length_in_s, guidance_scale, random_seed, n_candidates):
    if text is None:
        raise gr.Error("Please provide a text input.")

    waveforms = pipe(
        text,
        audio_length_in_s=audio_length_in_s,
        guidance_scale=guidance_scale,
        num_inference_steps=200,
        negative_prompt=negative_prompt,
        num_waveforms_per_prompt=n_candidates if n_candidates else 1,
        generator=generator.manual_seed(int(random_seed)),
    )["audios"]

    return gr.make_waveform((16000, waveforms[0]), bg_image="bg.png")


css = """
        a {
            color: inherit; text-decoration: underline;
        } .gradio-container {
            font-family: 'IBM Plex Sans', sans-serif;
        } .gr-button {
            color: white; border-color: #000000; background: #000000;
        } input[type='range'] {
            accent-color: #000000;
        } .dark input[type='range'] {
            accent-color: #dfdfdf;
        } .container {
            max-width: 730px; margin: auto; padding-top: 1.5rem;
        } #gallery {
            min-height: 22rem; margin-bottom: 15px; margin-left: auto; margin-right: auto; border-bottom-right-radius:
            .5rem !important; border-bottom-left-radius: .5rem !important;
        } #gallery>div>.h-full {
            min-height: 20rem;
        } .details:hover {
            text-decoration: underline;
        } .gr-button {
            white-space: nowrap;
        } .gr-button:focus {
            border-color: rgb(147 197 253 / var(--tw-border-opacity)); outline: none; box-shadow:
            var(--tw-ring-offset-shadow), var(--tw-ring-shadow), var(--tw-shadow, 0 0 #0000); --tw-border-opacity: 1;
            --tw-ring-offset-shadow: var(--tw-ring-inset) 0 0 0 var(--tw-ring-offset-width)
            var(--tw-ring-offset-color); --tw-ring-shadow: var(--tw-ring-inset) 0 0 0 calc(3px
            var(--tw-ring-offset-width)) var(--tw-ring-color); --tw-ring-color: rgb(191 219 254 /
            var(--tw-ring-opacity)); --tw-ring-opacity: .5;
        } #advanced-btn {
            font-size: .7rem !important; line-height: 19px; margin-top: 12px; margin-bottom: 12px; padding: 2px 8px;
            border-radius: 14px !important;
        } #advanced-options {
            margin-bottom: 20px;
        } .footer {
            margin-bottom: 45px; margin-top: 35px; text-align: center; border-bottom: 1px solid #e5e5e5;
        } .footer>p {
            font-size: .8rem; display: inline-block; padding: 0 10px; transform: translateY(10px); background: white;
        } .dark .footer {
            border-color: #303030;
        } .dark .footer>p {
            background: #0b0f19;
        } .acknowledgments h4{
            margin: 1.25em 0 .25em 0; font-weight: bold; font-size: 115%;
        } #container-advanced-btns{
            display: flex; flex-wrap: wrap; justify-content: space-between; align-items: center;
        } .animate-spin {
            animation: spin 1s linear infinite;
        } @keyframes spin {
            from {
                transform: rotate(0deg);
            } to {
                transform: rotate(360deg);
            }
        } .gr-form{
            flex: 1 1 50%; border-top-right-radius: 0; border-bottom-right-radius: 0;
        } #prompt-container{
            gap: 0;
        } #generated_id{
            min-height: 700px
        } #setting_id{
          margin-bottom: 12px;
          text-align: center;
          font-weight: 900;
        }
"""
iface = gr.Blocks(css=css)

with iface:
    gr.HTML(
        """
            <div style="text-align: center; max-width: 700px; margin: 0 auto;">
              <div
                style="
                  display: inline-flex; align-items: center; gap: 0.8rem; font-size: 1.75rem;
                "
              >
                <h1 style="font-weight: 900; margin-bottom: 7px; line-height: normal;">
                  AudioLDM 2: A General Framework for Audio, Music, and Speech Generation
                </h1>
              </div> <p style="margin-bottom: 10px; font-size: 94%">
                <a href="https://arxiv.org/abs/2308.05734">[Paper]</a>  <a href="https://audioldm.github.io/audioldm2">[Project
                page]</a> <a href="https://huggingface.co/docs/diffusers/main/en/api/pipelines/audioldm2">[🧨
                Diffusers]</a>
              </p>
            </div>
        """
    )
    gr.HTML(
        """This is the demo for AudioLDM 2, powered by 🧨 Diffusers. Demo uses the checkpoint <a
        href="https://huggingface.co/cvssp/audioldm2"> AudioLDM 2 base</a>. For faster inference without waiting in
        queue, you may duplicate the space and upgrade to a GPU in the settings."""
    )

    with gr.Group():
        with gr.Box():
            textbox = gr.Textbox(
                value="The vibrant beat of Brazilian samba drums.",
                max_lines=1,
                label="Input text",
                info="Your text is important for the audio quality. Please ensure it is descriptive by using more adjectives.",
                elem_id="prompt-in",
            )
            negative_textbox = gr.Textbox(
                value="Low quality.",
                max_lines=1,
                label="Negative prompt",
                info="Enter a negative prompt not to guide the audio generation. Selecting appropriate negative prompts can improve the audio quality significantly.",
                elem_id="prompt-in",
            )

            with gr.Accordion("Click to modify detailed configurations", open=False):
                seed = gr.Number(
                    value=45,
                    label="Seed",
                    info="Change this value (any integer number) will lead to a different generation result.",
                )
                duration = gr.Slider(5, 15, value=10, step=2.5, label="Duration (seconds)")
                guidance_scale = gr.Slider(
                    0,
                    7,
                    value=3.5,
                    step=0.5,
                    label="Guidance scale",
                    info="Larger => better quality and relevancy to text; Smaller => better diversity",
                )
                n_candidates = gr.Slider(
                    1,
                    5,
                    value=3,
                    step=1,
                    label="Number waveforms to generate",
                    info="Automatic quality control. This number control the number of candidates (e.g., generate three audios and choose the best to show you). A larger value usually lead to better quality with heavier computation",
                )

            outputs = gr.Video(label="Output", elem_id="output-video")
            btn = gr.Button("Submit")

        btn.click(
            text2audio,
            inputs=[textbox, negative_textbox, duration, guidance_scale, seed, n_candidates],
            outputs=[outputs],
        )

    gr.HTML(
        """
    <div class="footer" style="text-align: center; max-width: 700px; margin: 0 auto;">
        <p>Follow the latest update of AudioLDM 2 on our<a href="https://github.com/haoheliu/AudioLDM2"
        style="text-decoration: underline;" target="_blank"> Github repo</a> </p>
        <br>
        <p>Model by <a href="https://twitter.com/LiuHaohe" style="text-decoration: underline;"
        target="_blank">Haohe Liu</a>. Code and demo by 🤗 Hugging Face.</p>
        <br>
    </div>
    """
    )
    gr.Examples(
        [
            ["A hammer is hitting a wooden surface.", "Low quality.", 10, 3.5, 45, 3],
            ["A cat is meowing for attention.", "Low quality.", 10, 3.5, 45, 3],
            ["An excited crowd cheering at a sports game.", "Low quality.", 10, 3.5, 45, 3],
            ["Birds singing sweetly in a blooming garden.", "Low quality.", 10, 3.5, 45, 3],
            ["A modern synthesizer creating futuristic soundscapes.", "Low quality.", 10, 3.5, 45, 3],
            ["The vibrant beat of Brazilian samba drums.", "Low quality.", 10, 3.5, 45, 3],
        ],
        fn=text2audio,
        inputs=[textbox, negative_textbox, duration, guidance_scale, seed, n_candidates],
        outputs=[outputs],
        cache_examples=True,
    )
    with gr.Accordion("Additional information", open=False):
        gr.HTML(
            """
            <div class="acknowledgments">
                <p> We build the model with data from <a href="http://research.google.com/audioset/">AudioSet</a>,
                <a href="https://freesound.org/">Freesound</a> and <a href="https://sound-effects.bbcrewind.co.uk/">BBC
                Sound Effect library</a>. We share this demo based on the <a
                href="https://assets.publishing.service.gov.uk/government/uploads/system/uploads/attachment_data/file/375954/Research.pdf">UK
                copyright exception</a> of data for academic research. </p>
            </div>
            """
        )
# <p>This demo is strictly for research demo purpose only. For commercial use please <a href="haoheliu@gmail.com">contact us</a>.</p>

iface.queue(max_size=10).launch(debug=True)
