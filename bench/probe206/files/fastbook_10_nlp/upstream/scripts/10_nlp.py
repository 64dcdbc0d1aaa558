#!/usr/bin/env python
# coding: utf-8
# Chapter 10 -- NLP Deep Dive: RNNs (fastbook/10_nlp.ipynb exported as a script)
#
# ULMFiT on IMDb: fine-tune the WikiText-103 AWD-LSTM language model on the IMDb
# reviews, save the encoder, then train the sentiment classifier on top of it.
# Takes ~1h per LM epoch on a single 16GB GPU with fp16; pass --small for IMDB_SAMPLE.

import argparse
from fastbook import *
from fastai.text.all import *

parser = argparse.ArgumentParser()
parser.add_argument('--small', action='store_true', help='use IMDB_SAMPLE instead of the full dataset')
parser.add_argument('--bs', type=int, default=128)
parser.add_argument('--lm-epochs', type=int, default=10)
parser.add_argument('--device', default='cuda:0')
parser.add_argument('--fp16', type=int, default=1)
args, _ = parser.parse_known_args()

device = torch.device(args.device)
defaults.device = device
print(f"running on {device}: {torch.cuda.get_device_name(device)}")

# ## Text Preprocessing
# ### Word Tokenization with fastai

path = untar_data(URLs.IMDB_SAMPLE if args.small else URLs.IMDB)
files = get_text_files(path, folders = ['train', 'test', 'unsup'])
txt = files[0].open().read(); print(txt[:75])

spacy = WordTokenizer()
toks = first(spacy([txt]))
print(coll_repr(toks, 30))
print(first(spacy(['The U.S. dollar $1 is $1.00.'])))

tkn = Tokenizer(spacy)
print(coll_repr(tkn(txt), 31))
print(defaults.text_proc_rules)
print(coll_repr(tkn('&copy;   Fast.ai www.fast.ai/INDEX'), 31))

# ### Subword Tokenization

txts = L(o.open().read() for o in files[:2000])

def subword(sz):
    sp = SubwordTokenizer(vocab_sz=sz)
    sp.setup(txts)
    return ' '.join(first(sp([txt]))[:40])

print(subword(1000))
print(subword(200))
print(subword(10000))

# ### Numericalization with fastai

toks = tkn(txt)
print(coll_repr(tkn(txt), 31))
toks200 = txts[:200].map(tkn)
print(toks200[0])
num = Numericalize()
num.setup(toks200)
print(coll_repr(num.vocab,20))
nums = num(toks)[:20]; print(nums)
print(' '.join(num.vocab[o] for o in nums))

# ### Putting Our Texts into Batches for a Language Model

stream = "In this chapter, we will go back over the example of classifying movie reviews we studied in chapter 1 and dig deeper under the surface. First we will look at the processing steps necessary to convert text into numbers and how to customize it. By doing this, we'll have another example of the PreProcessor used in the data block API.\nThen we will study how we build a language model and train it for a while."
tokens = tkn(stream)
bs,seq_len = 6,15
d_tokens = np.array([tokens[i*seq_len:(i+1)*seq_len] for i in range(bs)])
df = pd.DataFrame(d_tokens)
display(HTML(df.to_html(index=False,header=None)))

nums200 = toks200.map(num)
dl = LMDataLoader(nums200)
x,y = first(dl)
print(x.shape,y.shape)
print(' '.join(num.vocab[o] for o in x[0][:20]))
print(' '.join(num.vocab[o] for o in y[0][:20]))

# ## Training a Text Classifier
# ### Language Model Using DataBlock

get_imdb = partial(get_text_files, folders=['train', 'test', 'unsup'])

dls_lm = DataBlock(
    blocks=TextBlock.from_folder(path, is_lm=True),
    get_items=get_imdb, splitter=RandomSplitter(0.1)
).dataloaders(path, path=path, bs=args.bs, seq_len=80, device=device)

dls_lm.show_batch(max_n=2)

# ### Fine-Tuning the Language Model

learn = language_model_learner(
    dls_lm, AWD_LSTM, drop_mult=0.3,
    metrics=[accuracy, Perplexity()])
if args.fp16: learn = learn.to_fp16()

learn.fit_one_cycle(1, 2e-2)

# ### Saving and Loading Models

learn.save('1epoch')
learn = learn.load('1epoch')
learn.unfreeze()
learn.fit_one_cycle(args.lm_epochs, 2e-3)
learn.save_encoder('finetuned')

# ### Text Generation

TEXT = "I liked this movie because"
N_WORDS = 40
N_SENTENCES = 2
preds = [learn.predict(TEXT, N_WORDS, temperature=0.75)
         for _ in range(N_SENTENCES)]
print("\n".join(preds))

# The language model and its optimizer state take most of the GPU memory; release
# them before building the classifier.
del learn
torch.cuda.empty_cache()

# ### Creating the Classifier DataLoaders

dls_clas = DataBlock(
    blocks=(TextBlock.from_folder(path, vocab=dls_lm.vocab),CategoryBlock),
    get_y = parent_label,
    get_items=partial(get_text_files, folders=['train', 'test']),
    splitter=GrandparentSplitter(valid_name='test')
).dataloaders(path, path=path, bs=args.bs, seq_len=72, device=device)

dls_clas.show_batch(max_n=3)

nums_samp = toks200[:10].map(num)
print(nums_samp.map(len))

learn = text_classifier_learner(dls_clas, AWD_LSTM, drop_mult=0.5,
                                metrics=accuracy)
if args.fp16: learn = learn.to_fp16()
learn = learn.load_encoder('finetuned')

# ### Fine-Tuning the Classifier

learn.fit_one_cycle(1, 2e-2)
learn.freeze_to(-2)
learn.fit_one_cycle(1, slice(1e-2/(2.6**4),1e-2))
learn.freeze_to(-3)
learn.fit_one_cycle(1, slice(5e-3/(2.6**4),5e-3))
learn.unfreeze()
learn.fit_one_cycle(2, slice(1e-3/(2.6**4),1e-3))

# ### Sanity check on a hand-made batch
# the classifier expects a LongTensor of token ids on the same device as the model
ids = dls_clas.test_dl(["This film was a complete waste of time."]).one_batch()[0]
with torch.no_grad():
    logits = learn.model.eval()(ids.to('cuda'))[0]
print(F.softmax(logits, dim=-1))
print(f"max memory allocated: {torch.cuda.max_memory_allocated(device) / 1024**3:.2f} GiB")
