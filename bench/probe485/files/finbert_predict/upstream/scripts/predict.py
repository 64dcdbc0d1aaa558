from finbert.finbert import predict
from transformers import AutoModelForSequenceClassification
import argparse
import os

parser = argparse.ArgumentParser(description='Sentiment analyzer')

parser.add_argument('-a', action="store_true", default=False)

parser.add_argument('--text_path', type=str, help='Path to the text file.')
parser.add_argument('--output_dir', type=str, help='Where to write the results')
parser.add_argument('--model_path', type=str, help='Path to classifier model')
parser.add_argument('--use_gpu', action='store_true', help='Run inference on a GPU if one is available')
parser.add_argument('--gpu_name', type=str, default='cuda:0',
                    help='Which GPU to run on when --use_gpu is set (e.g. cuda:1)')
parser.add_argument('--batch_size', type=int, default=5, help='Number of sentences per forward pass')

args = parser.parse_args()

if not os.path.exists(args.output_dir):
    os.mkdir(args.output_dir)

with open(args.text_path, 'r') as f:
    text = f.read()

model = AutoModelForSequenceClassification.from_pretrained(args.model_path, num_labels=3, cache_dir=None)

output = "predictions.csv"
predict(text, model, write_to_csv=True, path=os.path.join(args.output_dir, output),
        use_gpu=args.use_gpu, gpu_name=args.gpu_name, batch_size=args.batch_size)
