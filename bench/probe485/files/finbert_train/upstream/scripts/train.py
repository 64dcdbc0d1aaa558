#!/usr/bin/env python
# coding: utf-8
"""FinBERT training script, exported from notebooks/finbert_training.ipynb.

Fine-tunes a (further pre-trained) BERT language model on the Financial PhraseBank sentiment data
and reports accuracy / per-class F1 on the test split.
"""

from pathlib import Path
import shutil
import os
import logging
import sys
import argparse

sys.path.append('..')

from textblob import TextBlob
from pprint import pprint
from sklearn.metrics import classification_report

from transformers import AutoModelForSequenceClassification

from finbert.finbert import *
import finbert.utils as tools

# Pin the notebook to the first card; the discriminative fine-tuning below is tuned for one GPU.
os.environ["CUDA_VISIBLE_DEVICES"] = "0"

logging.basicConfig(format='%(asctime)s - %(levelname)s - %(name)s -   %(message)s',
                    datefmt='%m/%d/%Y %H:%M:%S',
                    level=logging.ERROR)

parser = argparse.ArgumentParser(description='Train FinBERT on the Financial PhraseBank')
parser.add_argument('--project_dir', type=str, default=str(Path.cwd().parent))
parser.add_argument('--lm_path', type=str, default=None,
                    help='Further pre-trained language model (models/language_model/finbertTRC2)')
parser.add_argument('--epochs', type=int, default=4)
parser.add_argument('--no_cuda', action='store_true', help='Train on CPU even if a GPU is present')
args = parser.parse_args()

project_dir = Path(args.project_dir)
pd.set_option('max_colwidth', -1)

# ## Prepare the model
# ### Setting path variables:
# 1. `lm_path`: the path for the pre-trained language model (If vanilla Bert is used then no need to set this one).
# 2. `cl_path`: the path where the classification model is saved.
# 3. `cl_data_path`: the path of the directory that contains the data files of `train.csv`, `validation.csv`,
#    `test.csv`.

lm_path = Path(args.lm_path) if args.lm_path else project_dir / 'models' / 'language_model' / 'finbertTRC2'
cl_path = project_dir / 'models' / 'classifier_model' / 'finbert-sentiment'
cl_data_path = project_dir / 'data' / 'sentiment_data'

# ### Configuring training parameters
# You can find the explanations of the training parameters in the class docstrings.

# Clean the cl_path
try:
    shutil.rmtree(cl_path)
except:
    pass

bertmodel = AutoModelForSequenceClassification.from_pretrained(lm_path, cache_dir=None, num_labels=3)

config = Config(data_dir=cl_data_path,
                bert_model=bertmodel,
                num_train_epochs=args.epochs,
                model_dir=cl_path,
                max_seq_length=48,
                train_batch_size=32,
                learning_rate=2e-5,
                output_mode='classification',
                warm_up_proportion=0.2,
                local_rank=-1,
                discriminate=True,
                gradual_unfreeze=True,
                no_cuda=args.no_cuda)

# `finbert` is our main class that encapsulates all the functionality. The list of class labels should be given in
# the prepare_model method call with label_list parameter.
finbert = FinBert(config)
finbert.base_model = 'bert-base-uncased'
finbert.config.discriminate = True
finbert.config.gradual_unfreeze = True

finbert.prepare_model(label_list=['positive', 'negative', 'neutral'])

# ## Fine-tune the model

# Get the training examples
train_data = finbert.get_data('train')

model = finbert.create_the_model()

# ### [Optional] Fine-tune only a subset of the model
# The variable `freeze` determines the last layer (out of 12) to be freezed. You can experiment with freezing
# different layers.
freeze = 6

for param in model.bert.embeddings.parameters():
    param.requires_grad = False

for i in range(freeze):
    for param in model.bert.encoder.layer[i].parameters():
        param.requires_grad = False

# ### Training

trained_model = finbert.train(train_examples=train_data, model=model)

# Free the GPU memory held by the training graph before evaluation
torch.cuda.empty_cache()

# ## Test the model
# `bert.evaluate` outputs the DataFrame, where true labels and logit values for each example is given

test_data = finbert.get_data('test')

results = finbert.evaluate(examples=test_data, model=trained_model)


# ### Prepare the classification report

def report(df, cols=['label', 'prediction', 'logits']):
    # print('Validation loss:{0:.2f}'.format(metrics['best_validation_loss']))
    cs = CrossEntropyLoss(weight=finbert.class_weights)
    loss = cs(torch.tensor(list(df[cols[2]])), torch.tensor(list(df[cols[0]])))
    print("Loss:{0:.2f}".format(loss))
    print("Accuracy:{0:.2f}".format((df[cols[0]] == df[cols[1]]).sum() / df.shape[0]))
    print("\nClassification Report:")
    print(classification_report(df[cols[0]], df[cols[1]]))


results['prediction'] = results.predictions.apply(lambda x: np.argmax(x, axis=0))

report(results, cols=['labels', 'prediction', 'predictions'])

# ### Get predictions
# With the `predict` function, given a piece of text, we split it into a list of sentences and then predict
# sentiment for each sentence. The output is written into a dataframe. Predictions are represented in three
# different columns:
#
# 1) `logit`: probabilities for each class
#
# 2) `prediction`: predicted label
#
# 3) `sentiment_score`: sentiment score calculated as: probability of positive - probability of negative

text = "Later that day Apple said it was revising down its earnings expectations in \
the fourth quarter of 2018, largely because of lower sales and signs of economic weakness in China. \
The news rapidly infected financial markets. Apple’s share price fell by around 7% in after-hours \
trading and the decline was extended to more than 10% when the market opened. The dollar fell \
by 3.7% against the yen in a matter of minutes after the announcement, before rapidly recovering \
some ground. Asian stockmarkets closed down on January 3rd and European ones opened lower. \
Yields on government bonds fell as investors fled to the traditional haven in a market storm."

cl_path = project_dir / 'models' / 'classifier_model' / 'finbert-sentiment'
model = AutoModelForSequenceClassification.from_pretrained(cl_path, cache_dir=None, num_labels=3)

result = predict(text, model, use_gpu=not args.no_cuda)

blob = TextBlob(text)
result['textblob_prediction'] = [sentence.sentiment.polarity for sentence in blob.sentences]
print(result)

print(f'Average sentiment is %.2f.' % (result.sentiment_score.mean()))
