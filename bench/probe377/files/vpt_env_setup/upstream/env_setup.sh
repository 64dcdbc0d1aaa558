conda create -n prompt python=3.7
source activate prompt

pip install -q tensorflow
# specifying tfds versions is important to reproduce our results
pip install tfds-nightly==4.4.0.dev202201080107
pip install opencv-python
pip install tensorflow-addons
pip install mock


conda install pytorch==1.7.1 torchvision==0.8.2 torchaudio==0.7.2 cudatoolkit=10.1 -c pytorch

python -m pip install detectron2 -f https://dl.fbaipublicfiles.com/detectron2/wheels/cu101/torch1.7/index.html
pip install -q simplejson
pip install -q termcolor
pip install -q pandas
pip install -q seaborn
pip install -q ipdb
pip install -q fvcore
pip install -q tabulate
pip install -q ml_collections
