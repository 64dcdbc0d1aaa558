"""Tests for the PyTorch backend of DeepExplainer, on CPU and (if present) on GPU."""

import numpy as np
import pytest

import shap

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional


def _available_devices():
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    return devices


@pytest.fixture(autouse=True)
def _exact_math():
    # DeepLIFT rescale multipliers are compared against the model output to 1e-4;
    # TF32 convolutions on Ampere are not accurate enough for that
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    yield


class _MnistNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)


class _SeqNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(4),
        )
        self.classifier = nn.Sequential(nn.Linear(16 * 4 * 4, 32), nn.Tanh(), nn.Linear(32, 10))

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x.flatten(1))


class _MultiInputNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 4)
        self.other = nn.Linear(3, 4)
        self.head = nn.Sequential(nn.Sigmoid(), nn.Linear(4, 2))

    def forward(self, x1, x2):
        return self.head(self.linear(x1) + self.other(x2))


@pytest.mark.parametrize("device", _available_devices())
def test_pytorch_mnist_cnn_additivity(device):
    torch.manual_seed(0)
    model = _SeqNet().to(device).eval()
    background = torch.rand(20, 1, 28, 28, device=device)
    test_x = torch.rand(4, 1, 28, 28, device=device)

    e = shap.DeepExplainer(model, background)
    shap_values = e.shap_values(test_x)  # runs the additivity check internally

    with torch.no_grad():
        outputs = model(test_x).cpu().numpy()
    sums = np.array([shap_values[..., i].reshape(4, -1).sum(-1) for i in range(10)]).T
    np.testing.assert_allclose(sums + e.expected_value, outputs, atol=1e-4)


@pytest.mark.parametrize("device", _available_devices())
def test_pytorch_custom_nested_models(device):
    torch.manual_seed(1)
    model = _MnistNet().to(device).eval()
    background = torch.rand(16, 1, 28, 28, device=device)
    test_x = torch.rand(2, 1, 28, 28, device=device)

    e = shap.DeepExplainer(model, background)
    shap_values, indexes = e.shap_values(test_x, ranked_outputs=3)
    assert shap_values.shape == (2, 1, 28, 28, 3)
    assert indexes.shape == (2, 3)


@pytest.mark.parametrize("device", _available_devices())
def test_pytorch_multiple_inputs(device):
    torch.manual_seed(2)
    model = _MultiInputNet().to(device).eval()
    background = [torch.randn(30, 8, device=device), torch.randn(30, 3, device=device)]
    test_x = [torch.randn(5, 8, device=device), torch.randn(5, 3, device=device)]

    e = shap.DeepExplainer(model, background)
    shap_values = e.shap_values(test_x)
    assert len(shap_values) == 2
    assert shap_values[0].shape == (5, 8, 2)
    assert shap_values[1].shape == (5, 3, 2)


@pytest.mark.parametrize("device", _available_devices())
def test_pytorch_interim_layer(device):
    torch.manual_seed(3)
    model = _SeqNet().to(device).eval()
    background = torch.rand(10, 1, 28, 28, device=device)
    test_x = torch.rand(3, 1, 28, 28, device=device)

    e = shap.DeepExplainer((model, model.classifier[0]), background)
    shap_values = e.shap_values(test_x)
    assert shap_values.shape == (3, 16 * 4 * 4, 10)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_pytorch_background_on_other_device():
    # the explainer follows the model: inputs given on the CPU are moved to the GPU
    model = _SeqNet().cuda().eval()
    background = torch.rand(10, 1, 28, 28).cuda()
    test_x = torch.rand(2, 1, 28, 28)

    e = shap.DeepExplainer(model, background)
    shap_values = e.shap_values(test_x)
    assert shap_values.shape == (2, 1, 28, 28, 10)
