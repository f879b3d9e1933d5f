"""Benchmark: matching a turn against a 5,000-term whitelist (docs/design.md#terms: well under 1 ms a turn).

    python -m benchmarks.terms [--terms 5000] [--rounds 200]

The shipped lists (about 1,500 technical and customer-service terms, Chinese and English) are
topped up to `--terms` with synthetic compound terms (service and module names) so the
automaton has the size a production deployment would load. Each round matches every turn of a
mixed Chinese/English sample (chat and ASR-style) with `note_sentences` — terms, the entropy
shortcut and authority words per sentence — as the flow does. Prints per-turn latency; it
measures, it does not assert.
"""

from __future__ import annotations

import argparse
import statistics
import time

from state.core.language import split_sentences
from state.core.word_index import WordIndex
from state.terms.whitelist import DEFAULT_AUTHORITY_FILE, DEFAULT_TERM_FILES, TermLexicon, TermsConfig, note_sentences

TURNS = [
    "好的收到，关于接口文档麻烦补充下错误码说明，另外测试账号权限我们已开通，谢谢",
    "我们下周二肯定能给到初版（停顿1.2秒）……不过测试环境还在搭。",
    "请务必在5月20日前完成，这是老板亲自交代的",
    "TCP三次握手超时，查一下负载均衡和DNS解析。",
    "Payment webhook keeps timing out, can you check the API gateway logs and the retry policy?",
    "The customer wants a refund for order 88231, the parcel was damaged in transit.",
    "嗯那个我想问一下我的退款什么时候到账啊已经七天了",
    "uh yeah the login page is down again since the last deployment, this is a P0, fix it ASAP",
    "帮我 check 一下 Kafka consumer group 的 offset 是不是积压了",
    "明天下午三点开会，把压测报告和慢查询的分析带上。",
    "你好，我想修改收货地址，顺便问下能不能开电子发票？",
    "Could you reset my password? I can't log in and the verification code never arrives.",
]
_PARTS_ZH = [
    "订单",
    "支付",
    "库存",
    "物流",
    "会员",
    "风控",
    "推荐",
    "搜索",
    "消息",
    "结算",
    "报表",
    "权限",
    "账户",
    "优惠",
]
_KINDS_ZH = ["服务", "接口", "模块", "中心", "平台", "网关", "队列", "任务", "引擎", "看板"]
_PARTS_EN = ["order", "payment", "inventory", "shipping", "member", "risk", "search", "billing", "report", "auth"]
_KINDS_EN = ["service", "api", "worker", "queue", "gateway", "scheduler", "pipeline", "dashboard", "cache", "index"]


def build_lexicon(size: int) -> TermLexicon:
    terms: dict[str, str] = {}
    for path in DEFAULT_TERM_FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                terms.setdefault(line.strip(), line.strip())
    n = 0
    while len(terms) < size:  # synthetic compounds: 订单服务3, payment-api-7 …
        for a in _PARTS_ZH:
            for b in _KINDS_ZH:
                terms.setdefault(f"{a}{b}{n}", f"{a}{b}{n}")
        for a in _PARTS_EN:
            for b in _KINDS_EN:
                terms.setdefault(f"{a}-{b}-{n}", f"{a}-{b}-{n}")
        n += 1
    kept = dict(list(terms.items())[:size])
    authority = {
        w.strip(): w.strip()
        for w in DEFAULT_AUTHORITY_FILE.read_text(encoding="utf-8").splitlines()
        if w.strip() and not w.startswith("#")
    }
    return TermLexicon(WordIndex(kept), WordIndex(authority))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--terms", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    lexicon = build_lexicon(args.terms)
    built = time.perf_counter() - started
    config = TermsConfig()
    sentences = [split_sentences(t) for t in TURNS]
    for s in sentences:  # warm up
        note_sentences(s, lexicon, config)
    samples: list[float] = []
    for _ in range(args.rounds):
        for s in sentences:
            t0 = time.perf_counter_ns()
            note_sentences(s, lexicon, config)
            samples.append((time.perf_counter_ns() - t0) / 1000)
    samples.sort()
    p99 = samples[int(len(samples) * 0.99) - 1]
    print(f"whitelist: {len(lexicon)} terms (automaton built in {built * 1000:.0f} ms)")
    print(f"turns matched: {len(samples)} ({len(TURNS)} turns x {args.rounds} rounds, zh/en/mixed, chat and ASR)")
    print(
        f"per turn: mean {statistics.fmean(samples):.1f} us, p50 {samples[len(samples) // 2]:.1f} us, "
        f"p99 {p99:.1f} us, max {samples[-1]:.1f} us"
    )


if __name__ == "__main__":
    main()
