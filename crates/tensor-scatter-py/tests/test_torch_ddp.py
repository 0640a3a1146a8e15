"""DistributedDataParallel: two processes (gloo on 127.0.0.1) train a GNN built on the package
three steps; both ranks hold the same parameters bit for bit after every step, and the same
parameters as one process training on the whole batch, to float tolerance."""

import os
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

STEPS = 3

# Each process runs this: the model, the data (four graphs, the same in every process), and
# three SGD steps on its share (rank r of w takes graphs r, r + w, ...); with one process it
# takes them all. The parameters after every step go to OUT/params-<rank>.pt.
WORKER = r'''
import os, sys, torch, torch.distributed as dist
import tensor_scatter as ts

out, rank, world = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(0)

class GNN(torch.nn.Module):
    def __init__(self, f=8):
        super().__init__()
        self.lin1 = torch.nn.Linear(f, f, dtype=torch.float64)
        self.att = torch.nn.Linear(2 * f, 1, dtype=torch.float64)
        self.lin2 = torch.nn.Linear(f, 1, dtype=torch.float64)

    def forward(self, x, src, dst):
        n = x.shape[0]
        h = ts.scatter(ts.gather(self.lin1(x), src), dst, 0, dim_size=n, reduce="mean").relu()
        e = self.att(torch.cat([ts.gather(h, src), ts.gather(h, dst)], -1)).squeeze(-1)
        a = ts.scatter_softmax(e, dst, 0, dim_size=n)
        y = ts.scatter(a.unsqueeze(-1) * ts.gather(h, src), dst, 0, dim_size=n, reduce="sum")
        return self.lin2(ts.scatter_max(y, torch.zeros(n, dtype=torch.int64), 0)[0])

model = GNN()
g = torch.Generator().manual_seed(1)
graphs = []
for n, e in [(12, 40), (20, 57), (9, 30), (31, 90)]:
    x = torch.randn(n, 8, dtype=torch.float64, generator=g)
    graphs.append((x, torch.randint(0, n, (e,), generator=g), torch.randint(0, n, (e,), generator=g),
                   torch.randn(1, 1, dtype=torch.float64, generator=g)))
mine = graphs[rank::world]
if world > 1:
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
params = []
for step in range(%(steps)d):
    opt.zero_grad()
    loss = sum((model(x, s, d) - y).pow(2).sum() for x, s, d, y in mine) / len(mine)
    loss.backward()
    opt.step()
    params.append([p.detach().clone() for p in model.parameters()])
torch.save(params, os.path.join(out, f"params-{rank}.pt"))
if world > 1:
    dist.destroy_process_group()
''' % {"steps": STEPS}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(out, world):
    """The ``world`` processes of one run (every process of both runs starts at once)."""
    out.mkdir()
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()),
               OMP_NUM_THREADS="1")
    return [subprocess.Popen([sys.executable, "-c", WORKER, str(out), str(r), str(world)],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for r in range(world)]


def _results(out, procs):
    for p in procs:
        log, _ = p.communicate(timeout=300)
        assert p.returncode == 0, log.decode()[-3000:]
    return [torch.load(str(out / f"params-{r}.pt")) for r in range(len(procs))]


def test_ddp_ranks_agree_bit_for_bit_and_match_one_process(tmp_path):
    ddp, one = _start(tmp_path / "ddp", 2), _start(tmp_path / "one", 1)
    rank0, rank1 = _results(tmp_path / "ddp", ddp)
    (alone,) = _results(tmp_path / "one", one)
    assert len(rank0) == len(rank1) == len(alone) == STEPS
    for step in range(STEPS):
        for a, b, c in zip(rank0[step], rank1[step], alone[step]):
            assert torch.equal(a, b), f"step {step}: the ranks differ"
            torch.testing.assert_close(a, c, rtol=1e-10, atol=1e-12)
    # The model trained: its parameters moved.
    assert any(not torch.equal(a, b) for a, b in zip(rank0[0], rank0[-1]))
