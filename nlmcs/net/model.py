"""The policy/value network: one small torch module over a batch of ragged positions.

Shapes: S positions, A agents (all positions' agents in one list), C candidate actions (all
agents' legal actions in one list), H hidden units, F state features, K tokens per row.

    glob (S, F) --signed log--> MLP -----------------------------> hg (S, H)
    agent tokens (A, Ka) --embed, sum--> + hg[agent_pos] --> MLP -> ha (A, H)
    action tokens (C, Kc) --embed, sum--> W --+ ha[cand_agent] --> ReLU --> Linear -> logit (C,)
    [hg, mean of ha over the position's agents] --> MLP --> sigmoid -> value (S,)

A logit exists only for a legal action, and the policy is a softmax over each agent's own
candidates (`agent_log_softmax`), so an illegal move can never be chosen. The value is the
probability that the position's player wins the game (a draw counts half).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

from nlmcs.fields import check_fields, option
from nlmcs.net.features import PAD, Batch


@dataclass(frozen=True)
class NetConfig:
    """The policy/value network's shape."""

    hidden: int = option(64, low=1)
    """Width H of every hidden layer."""

    def __post_init__(self) -> None:
        check_fields(self, "network option")

    def to_dict(self) -> dict:
        return asdict(self)


class PolicyValueNet(nn.Module):
    def __init__(self, n_features: int, n_tokens: int, config: NetConfig | None = None):
        super().__init__()
        config = config or NetConfig()
        h = config.hidden
        self.config = config
        self.embed = nn.Embedding(n_tokens, h, padding_idx=PAD)
        self.state_mlp = nn.Sequential(nn.Linear(n_features, h), nn.ReLU(),
                                       nn.Linear(h, h), nn.ReLU())
        self.agent_mlp = nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.action_proj = nn.Linear(h, h)
        self.policy_out = nn.Linear(h, 1)
        self.value_mlp = nn.Sequential(nn.Linear(2 * h, h), nn.ReLU(), nn.Linear(h, 1))

    def forward(self, glob: torch.Tensor, agent_pos: torch.Tensor, agent_tok: torch.Tensor,
                cand_agent: torch.Tensor, cand_tok: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """(candidate logits (C,), value logits (S,)); sigmoid of the second is the value."""
        x = torch.sign(glob) * torch.log1p(glob.abs())  # counts span 0..1000s: compress them
        hg = self.state_mlp(x)  # (S, H)
        ha = self.agent_mlp(self.embed(agent_tok).sum(1) + hg[agent_pos])  # (A, H)
        hc = self.action_proj(self.embed(cand_tok).sum(1))  # (C, H)
        logits = self.policy_out(torch.relu(hc + ha[cand_agent])).squeeze(-1)  # (C,)
        pooled = segment_mean(ha, agent_pos, len(glob))  # (S, H)
        value = self.value_mlp(torch.cat([hg, pooled], -1)).squeeze(-1)  # (S,)
        return logits, value


def segment_mean(rows: torch.Tensor, segment: torch.Tensor, n: int) -> torch.Tensor:
    """Mean of `rows` per segment id (0 where a segment has no rows)."""
    total = rows.new_zeros((n, rows.shape[1])).index_add_(0, segment, rows)
    count = rows.new_zeros(n).index_add_(0, segment, rows.new_ones(len(rows)))
    return total / count.clamp(min=1.0).unsqueeze(-1)


def agent_log_softmax(logits: torch.Tensor, cand_agent: torch.Tensor, n_agents: int
                      ) -> torch.Tensor:
    """log p of each candidate among its own agent's candidates (C,)."""
    top = logits.new_full((n_agents,), -torch.inf).scatter_reduce(
        0, cand_agent, logits, reduce="amax", include_self=True)
    shifted = logits - top[cand_agent].detach()
    norm = logits.new_zeros(n_agents).index_add_(0, cand_agent, shifted.exp())
    return shifted - norm.log()[cand_agent]


def tensors(batch: Batch, device: torch.device | str = "cpu",
            dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """A batch's arrays as the forward pass's keyword arguments."""
    return {
        "glob": torch.as_tensor(batch.glob, dtype=dtype, device=device),
        "agent_pos": torch.as_tensor(batch.agent_pos, dtype=torch.long, device=device),
        "agent_tok": torch.as_tensor(batch.agent_tok, dtype=torch.long, device=device),
        "cand_agent": torch.as_tensor(batch.cand_agent, dtype=torch.long, device=device),
        "cand_tok": torch.as_tensor(batch.cand_tok, dtype=torch.long, device=device),
    }
