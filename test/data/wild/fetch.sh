#!/usr/bin/env bash
# Fetches the corpus's larger traces (test/data/wild/SOURCES.md, "Fetched") into
# test/data/wild/fetched/ and checks each against its sha256; test_wild_traces_vs_hta.py skips
# the ones not fetched, saying so. Needs the network (CI has none).
#   test/data/wild/fetch.sh
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p fetched
TRACELENS=https://raw.githubusercontent.com/AMD-AGI/TraceLens/171dd74721ca1ec45709e5805b68ae1f65e27811/tests/traces
DEEPSEEK=https://raw.githubusercontent.com/deepseek-ai/profile-data/449602428a1b023acb8a505d4f34fef536535db6

# file  sha256  URL
while read -r file sha url; do
  [ -z "$file" ] && continue
  if [ -f "fetched/$file" ] && echo "$sha  fetched/$file" | sha256sum -c --quiet 2>/dev/null; then
    echo "have $file"; continue
  fi
  echo "fetching $file"
  curl -fsSL --retry 3 -o "fetched/$file.part" "$url"
  echo "$sha  fetched/$file.part" | sha256sum -c --quiet || { rm -f "fetched/$file.part"; exit 1; }
  mv "fetched/$file.part" "fetched/$file"
done <<LIST
tracelens_b200_eager.json.gz 7f5e9c9dc4ba71371fde1d947204134575b05d7a614986f249fa8142663c7ca2 $TRACELENS/b200/eager_trace.json.gz
tracelens_h100_owlv2.json.gz 959efc7b235d78c5a22ad94c689175a4f5a4c1592edd5e2df6dafdd9098d5a10 $TRACELENS/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz
tracelens_mi300_owlv2.json.gz 17e915071698f3cbec631179a7b31456fffb98a28b68340fc09e09687e5c7714 $TRACELENS/mi300/google_owlv2-large-patch14-ensemble__1016001.json.gz
deepseek_v3_train_ep64.json d7b7232efa7708990df5973a0558cf07394ec3f9387ac5d705a607960f2467c1 $DEEPSEEK/train.json
LIST
