"""Handwritten digit recognition with the symbolic API and Module.fit, written the way
the Apache MXNet 1.x tutorials trained MNIST ("Handwritten Digit Recognition",
``mx.io.NDArrayIter`` + ``mx.sym`` + ``mx.mod.Module.fit``).

The MNIST download is replaced by the UCI handwritten digits that scikit-learn ships
(1,797 8x8 images, no download). The script runs unchanged under Apache MXNet 1.9 and
under plexnet; only the import line differs:

    import mxnet as mx      # Apache MXNet 1.x
    import plexnet as mx    # plexnet

Usage: python examples/mnist_module_fit.py [--network mlp|lenet] [--epochs N]
"""
import argparse
import logging

import numpy as np
from sklearn.datasets import load_digits

import plexnet as mx

logging.getLogger().setLevel(logging.INFO)
logging.basicConfig(format="%(asctime)s %(message)s")


def get_digits(seed=0):
    digits = load_digits()
    X = (digits.images / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.float32)
    idx = np.random.RandomState(seed).permutation(len(y))
    n_train = int(0.8 * len(y))
    train, test = idx[:n_train], idx[n_train:]
    return {"train_data": X[train], "train_label": y[train], "test_data": X[test], "test_label": y[test]}


def get_mlp():
    data = mx.sym.var("data")
    data = mx.sym.flatten(data=data)
    fc1 = mx.sym.FullyConnected(data=data, num_hidden=128)
    act1 = mx.sym.Activation(data=fc1, act_type="relu")
    fc2 = mx.sym.FullyConnected(data=act1, num_hidden=64)
    act2 = mx.sym.Activation(data=fc2, act_type="relu")
    fc3 = mx.sym.FullyConnected(data=act2, num_hidden=10)
    return mx.sym.SoftmaxOutput(data=fc3, name="softmax")


def get_lenet():
    data = mx.sym.var("data")
    # first conv layer
    conv1 = mx.sym.Convolution(data=data, kernel=(3, 3), pad=(1, 1), num_filter=20)
    tanh1 = mx.sym.Activation(data=conv1, act_type="tanh")
    pool1 = mx.sym.Pooling(data=tanh1, pool_type="max", kernel=(2, 2), stride=(2, 2))
    # second conv layer
    conv2 = mx.sym.Convolution(data=pool1, kernel=(3, 3), pad=(1, 1), num_filter=50)
    tanh2 = mx.sym.Activation(data=conv2, act_type="tanh")
    pool2 = mx.sym.Pooling(data=tanh2, pool_type="max", kernel=(2, 2), stride=(2, 2))
    # first fullc layer
    flatten = mx.sym.flatten(data=pool2)
    fc1 = mx.sym.FullyConnected(data=flatten, num_hidden=500)
    tanh3 = mx.sym.Activation(data=fc1, act_type="tanh")
    # second fullc
    fc2 = mx.sym.FullyConnected(data=tanh3, num_hidden=10)
    # softmax loss
    return mx.sym.SoftmaxOutput(data=fc2, name="softmax")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", choices=["mlp", "lenet"], default="lenet")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    mnist = get_digits()
    batch_size = args.batch_size
    train_iter = mx.io.NDArrayIter(mnist["train_data"], mnist["train_label"], batch_size, shuffle=True)
    val_iter = mx.io.NDArrayIter(mnist["test_data"], mnist["test_label"], batch_size)

    net = get_lenet() if args.network == "lenet" else get_mlp()
    mx.random.seed(42)
    model = mx.mod.Module(symbol=net, context=mx.cpu())
    model.fit(train_iter,
              eval_data=val_iter,
              optimizer="sgd",
              optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
              initializer=mx.init.Xavier(),
              eval_metric="acc",
              batch_end_callback=mx.callback.Speedometer(batch_size, 10),
              num_epoch=args.epochs)

    test_iter = mx.io.NDArrayIter(mnist["test_data"], None, batch_size)
    prob = model.predict(test_iter)
    assert prob.shape == (len(mnist["test_label"]), 10)
    test_iter = mx.io.NDArrayIter(mnist["test_data"], mnist["test_label"], batch_size)
    acc = mx.metric.Accuracy()
    model.score(test_iter, acc)
    print(acc)
    print("test accuracy: %.4f" % acc.get()[1])


if __name__ == "__main__":
    main()
