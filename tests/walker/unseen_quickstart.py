"""A training script in the style of PyTorch's own quickstart tutorial, written for the job runner's test without
looking at the runner: a small convolutional classifier on a synthetic image dataset, a DataLoader with worker
processes, SGD, a train loop and an evaluation loop. The one line for the test bed is the checkpoint at the end of
training; everything else is what a user would write."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import memprof_testbed

device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device")

# Stand-in for FashionMNIST: 512 grey 28x28 images in 10 classes.
generator = torch.Generator().manual_seed(0)
images = torch.rand(512, 1, 28, 28, generator=generator)
labels = torch.randint(0, 10, (512,), generator=generator)
training_data = TensorDataset(images[:448], labels[:448])
test_data = TensorDataset(images[448:], labels[448:])
train_dataloader = DataLoader(training_data, batch_size=64, shuffle=True, num_workers=2)
test_dataloader = DataLoader(test_data, batch_size=64)


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.flatten = nn.Flatten()
        self.classifier = nn.Sequential(nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.flatten(self.features(x)))


model = NeuralNetwork().to(device)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)


def train(dataloader, model, loss_fn, optimizer):
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)
        loss = loss_fn(model(X), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if batch % 4 == 0:
            print(f"loss: {loss.item():>7f}  [{(batch + 1) * len(X):>5d}/{len(dataloader.dataset):>5d}]")


def test(dataloader, model, loss_fn):
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    print(f"Test Error: Accuracy: {100 * correct / len(dataloader.dataset):>0.1f}%, Avg loss: {test_loss:>8f}")


for epoch in range(2):
    print(f"Epoch {epoch + 1}\n-------------------------------")
    train(train_dataloader, model, loss_fn, optimizer)
    test(test_dataloader, model, loss_fn)
memprof_testbed.checkpoint()
print("Done!")
