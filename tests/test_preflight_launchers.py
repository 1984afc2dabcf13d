"""Preflight on the launchers people write today (issue 26): TensorFlow SMDDP, the SDK's own
refusals, launcher facts that stand without the program, guards the job decides, values that
flow through copies and joins, missing things, recipes and launcher command lines.

Fixtures are written here or live in tests/fixtures/preflight-corpus (c27 onwards).
"""

from __future__ import annotations

import ast
import json
import importlib.metadata
import importlib.util
import shutil
from pathlib import Path

import pytest

from smddp_infra.preflight import run_preflight
from smddp_infra.preflight.job import SDK_V2_P5_MARKER, SDK_V2_P5_REFUSAL, SDK_V2_SOURCE

from _preflight_helpers import CORPUS, ROOT, by_rule, write


# ---------------------------------------------------------------- TensorFlow SMDDP


def test_the_tensorflow_smddp_api_is_smddp_in_use_and_not_deprecated():
    report = run_preflight(CORPUS / "c27_tf_smddp" / "launch_p4d.py")
    smddp = report.jobs[0].facts.smddp
    assert (smddp.state, smddp.framework) == ("yes", "tensorflow")
    assert "sdp.init()" in (smddp.evidence or "")
    assert report.findings == ()


def test_tensorflow_smddp_on_legacy_p3dn_is_the_tables_warning():
    [f] = run_preflight(CORPUS / "c27_tf_smddp" / "launch_p3dn.py").findings
    assert (f.rule_id, f.severity) == ("PF-SMDDP-INSTANCE", "warning") and "legacy" in f.message


def test_tensorflow_smddp_on_g5_is_an_error_whose_fix_is_not_torchrun():
    [f] = run_preflight(CORPUS / "c27_tf_smddp" / "launch_g5.py").findings
    assert (f.rule_id, f.severity) == ("PF-SMDDP-INSTANCE", "error")
    assert "uses the SMDDP collectives" in f.message
    assert "multi_worker_mirrored_strategy" in f.fix and "torch" not in f.fix.lower()


def test_a_tensorflow_script_without_smddp_under_the_smdistributed_launcher_gets_a_tensorflow_fix(tmp_path):
    write(tmp_path, {
        "src/train.py": """
            import tensorflow as tf
            strategy = tf.distribute.MultiWorkerMirroredStrategy()
        """,
        "launch.py": """
            from sagemaker.tensorflow import TensorFlow
            TensorFlow(entry_point="train.py", source_dir="src", instance_type="ml.g5.12xlarge", instance_count=2,
                       framework_version="2.14", py_version="py310",
                       distribution={"smdistributed": {"dataparallel": {"enabled": True}}})
        """,
    })
    [f] = run_preflight(tmp_path / "launch.py").findings
    assert (f.rule_id, f.severity) == ("PF-SMDDP-LAUNCHER", "warning")
    assert "multi_worker_mirrored_strategy" in f.fix and "torch" not in f.fix


def test_a_guarded_tensorflow_smddp_init_follows_the_hyperparameter(tmp_path):
    write(tmp_path, {"src/train.py": """
        import argparse
        import smdistributed.dataparallel.tensorflow as sdp
        p = argparse.ArgumentParser()
        p.add_argument("--use-smddp", type=int, default=1)
        args = p.parse_args()
        if args.use_smddp:
            sdp.init()
    """})
    for hp, expected in (({"use-smddp": 0}, []), ({}, ["error"])):
        (tmp_path / "launch.py").write_text(
            "from sagemaker.tensorflow import TensorFlow\n"
            f"TensorFlow(entry_point='train.py', source_dir='src', instance_type='ml.g5.12xlarge', instance_count=2, "
            f"hyperparameters={hp!r})\n")
        assert [f.severity for f in by_rule(run_preflight(tmp_path / "launch.py"), "PF-SMDDP-INSTANCE")] == expected


# ---------------------------------------------------------------- the SDK's own refusal


def test_the_installed_sdk_v2_still_refuses_smdistributed_on_p5_with_this_message():
    """The refusal preflight reports is read from the installed SDK's source (not imported)."""
    spec = importlib.util.find_spec("sagemaker")
    assert spec is not None and spec.submodule_search_locations
    source = (Path(next(iter(spec.submodule_search_locations))) / "estimator.py").read_text()
    [framework] = [n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "Framework"]
    [method] = [n for n in framework.body if isinstance(n, ast.FunctionDef) and n.name == "_distribution_configuration"]
    body = ast.get_source_segment(source, method) or ""
    assert f"sagemaker {importlib.metadata.version('sagemaker')} " in SDK_V2_SOURCE  # the version the message cites
    assert f'"{SDK_V2_P5_REFUSAL}"' in body
    assert f'"{SDK_V2_P5_MARKER}" in self.instance_type' in body
    assert '"smdistributed" in distribution' in body and "not torch_distributed_enabled and p5_enabled" in body


def test_smdistributed_on_p5_is_an_error_citing_the_sdk_and_the_launcher_warning_is_not_repeated():
    [f] = run_preflight(CORPUS / "c28_p5_smdistributed" / "launch.py").findings
    assert (f.rule_id, f.severity, f.location) == ("PF-SDK-REFUSES", "error", "launch.py:15: distribution")
    assert "sagemaker/estimator.py" in f.message and SDK_V2_P5_REFUSAL in f.message


@pytest.mark.parametrize("estimator, distribution, instance_type, refused", [
    ("PyTorch", '{"pytorchddp": {"enabled": True}}', "ml.p5.48xlarge", True),  # rewritten into smdistributed
    ("PyTorch", '{"smdistributed": {"dataparallel": {"enabled": True}}, "torch_distributed": {"enabled": True}}',
     "ml.p5.48xlarge", False),
    ("HuggingFace", '{"pytorchddp": {"enabled": True}}', "ml.p5.48xlarge", False),  # HF does not rewrite it
    ("HuggingFace", '{"smdistributed": {"dataparallel": {"enabled": True}}}', "ml.p5.48xlarge", True),
    ("TensorFlow", '{"smdistributed": {"dataparallel": {"enabled": True}}}', "ml.p5.48xlarge", True),
    ("PyTorch", '{"smdistributed": {"dataparallel": {"enabled": True}}}', "ml.p5e.48xlarge", False),
    ("PyTorch", '{"torch_distributed": {"enabled": True}}', "ml.p5.48xlarge", False),
])
def test_the_refusal_follows_the_sdks_condition(tmp_path, estimator, distribution, instance_type, refused):
    module = {"PyTorch": "pytorch", "HuggingFace": "huggingface", "TensorFlow": "tensorflow"}[estimator]
    write(tmp_path, {"launch.py": f"""
        from sagemaker.{module} import {estimator}
        {estimator}(entry_point="train.py", instance_type="{instance_type}", instance_count=2,
                    distribution={distribution})
    """})
    found = by_rule(run_preflight(tmp_path / "launch.py"), "PF-SDK-REFUSES")
    assert [f.severity for f in found] == (["error"] if refused else [])


_REFUSAL_TORCH_FIX = ('distribution={"torch_distributed": {"enabled": True}} and init_process_group(backend="nccl") in the '
                      "script (SMDDP does not run on p5; NCCL uses the same EFA network)")
_REFUSAL_TF_FIX = ('distribution={"multi_worker_mirrored_strategy": {"enabled": True}} with tf.distribute in the script '
                   "(SMDDP does not run on p5)")


@pytest.mark.parametrize("estimator, key, rewrite, fix", [
    ("PyTorch", "pytorchddp", " (the PyTorch estimator rewrites pytorchddp into smdistributed first)", _REFUSAL_TORCH_FIX),
    ("PyTorch", "smdistributed", "", _REFUSAL_TORCH_FIX),
    ("TensorFlow", "smdistributed", "", _REFUSAL_TF_FIX),
])
def test_the_refusal_word_for_word_names_the_rewrite_and_the_frameworks_launcher(tmp_path, estimator, key, rewrite, fix):
    distribution = {"pytorchddp": '{"pytorchddp": {"enabled": True}}',
                    "smdistributed": '{"smdistributed": {"dataparallel": {"enabled": True}}}'}[key]
    write(tmp_path, {"train.py": "import os\n", "launch.py": f"""
        from sagemaker.{estimator.lower()} import {estimator}
        {estimator}(entry_point="train.py", instance_type="ml.p5.48xlarge", instance_count=2,
                    distribution={distribution})
    """})
    [f] = run_preflight(tmp_path / "launch.py").findings
    assert (f.rule_id, f.severity, f.location, f.message, f.fix) == (
        "PF-SDK-REFUSES", "error", "launch.py:3: distribution",
        f"distribution with {key} on ml.p5.48xlarge (launch.py:2: instance_type) and no torch_distributed: the SDK "
        f"refuses it when fit() builds the job{rewrite} ({SDK_V2_SOURCE}: ValueError: {SDK_V2_P5_REFUSAL})", fix)


# ---------------------------------------------------------------- launcher facts standing alone


def test_an_opaque_program_under_the_smdistributed_launcher_is_judged_from_distribution_and_type():
    report = run_preflight(CORPUS / "c29_opaque_backend" / "launch.py")
    local, git = report.jobs
    assert [(f.rule_id, f.severity) for f in local.findings] == [("PF-SMDDP-INSTANCE", "warning")]
    assert "ml.p3.16xlarge" in local.findings[0].message and "TRAINING_BACKEND" in local.findings[0].message
    [f] = git.findings
    assert (f.rule_id, f.severity) == ("PF-SMDDP-INSTANCE", "warning")
    assert "ml.p3dn.24xlarge" in f.message and "could not read the program" in f.message


# ---------------------------------------------------------------- guards the job decides


def test_the_hugging_face_guard_is_decided_by_the_jobs_distribution_and_environment():
    on_p4d = run_preflight(CORPUS / "c30_hf_guard" / "launch_p4d.py")
    assert on_p4d.jobs[0].facts.smddp.state == "yes"  # smdistributed sets sagemaker_distributed_dataparallel_enabled
    assert {f.rule_id for f in on_p4d.findings} == {"PF-DEPRECATED-SMDDP-API"}
    on_g5 = run_preflight(CORPUS / "c30_hf_guard" / "launch_g5.py")  # environment={"SDP_ENABLED": "1"}
    [f] = by_rule(on_g5, "PF-SMDDP-INSTANCE")
    assert f.severity == "error" and "run_clm.py:9" in f.message


GUARDED = """
    import json
    import os
    from transformers.utils import is_sagemaker_dp_enabled, is_sagemaker_mp_enabled
    if {test}:
        import smdistributed.dataparallel.torch.torch_smddp
        import torch.distributed as dist
        dist.init_process_group(backend="smddp")
"""


@pytest.mark.parametrize("test, distribution, environment, expected", [
    ("is_sagemaker_dp_enabled()", '{"torch_distributed": {"enabled": True}}', "{}", []),
    ("is_sagemaker_dp_enabled()", '{"smdistributed": {"dataparallel": {"enabled": True}}}', "{}", ["error"]),
    ("is_sagemaker_dp_enabled()", '{"pytorchddp": {"enabled": True}}', "{}", ["error"]),  # rewritten into smdistributed
    ("is_sagemaker_mp_enabled()", '{"torch_distributed": {"enabled": True}}', "{}", []),
    ('json.loads(os.environ["SM_FRAMEWORK_PARAMS"]).get("sagemaker_distributed_dataparallel_enabled", False)',
     '{"torch_distributed": {"enabled": True}}', "{}", []),
    ('"sagemaker_distributed_dataparallel_enabled" in json.loads(os.environ.get("SM_FRAMEWORK_PARAMS", "{}"))',
     '{"smdistributed": {"dataparallel": {"enabled": True}}}', "{}", ["error"]),
    ('len(json.loads(os.environ["SM_HOSTS"])) > 1', '{"torch_distributed": {"enabled": True}}', "{}", ["error"]),
    ('os.environ.get("SMDATAPARALLEL_LMC_ENABLE")', '{"torch_distributed": {"enabled": True}}', "{}", []),
    ('os.environ.get("USE_SMDDP") == "1"', '{"torch_distributed": {"enabled": True}}', '{"USE_SMDDP": "1"}', ["error"]),
    ('os.environ.get("USE_SMDDP") == "1"', '{"torch_distributed": {"enabled": True}}', '{"USE_SMDDP": "0"}', []),
    ('os.environ.get("USE_SMDDP")', '{"torch_distributed": {"enabled": True}}', '{"USE_SMDDP": "0"}', ["error"]),  # "0" is true
    # a name the job does not set stays unknown: a warning at most
    ('os.environ.get("USE_SMDDP") or is_sagemaker_dp_enabled()', '{"torch_distributed": {"enabled": True}}', "{}",
     ["warning"]),
    ('os.environ.get("USE_SMDDP") and is_sagemaker_dp_enabled()', '{"torch_distributed": {"enabled": True}}', "{}", []),
])
def test_guards_are_evaluated_against_the_job(tmp_path, test, distribution, environment, expected):
    write(tmp_path, {"src/train.py": GUARDED.format(test=test), "launch.py": f"""
        from sagemaker.pytorch import PyTorch
        PyTorch(entry_point="train.py", source_dir="src", instance_type="ml.g5.48xlarge", instance_count=2,
                distribution={distribution}, environment={environment})
    """})
    found = by_rule(run_preflight(tmp_path / "launch.py"), "PF-SMDDP-INSTANCE")
    assert [f.severity for f in found] == expected


# ---------------------------------------------------------------- values on the way


def test_deepcopied_and_updated_settings_reach_the_job():
    p5, p4d = run_preflight(CORPUS / "c31_deepcopy_hp" / "launch.py").jobs
    assert (p5.job.instance_type, p5.job.hyperparameters["distributed_backend"]) == ("ml.p5.48xlarge", "nccl")
    assert p5.facts.smddp.state == "no" and p5.facts.smddp.backend == "nccl"
    assert (p4d.job.instance_type, p4d.facts.smddp.state) == ("ml.p4d.24xlarge", "yes")
    assert p5.findings == () and p4d.findings == ()


def test_an_f_string_inside_os_path_join_keeps_the_literal_tail():
    [f] = run_preflight(CORPUS / "c32_fstring_join" / "launch.py").findings
    assert (f.rule_id, f.severity) == ("PF-CHECKPOINT-URI-SLASH", "warning")
    assert "s3://{bucket}/resnet-ddp/checkpoints " in f.message


@pytest.mark.parametrize("lines, backend", [
    ('hp = dict(base)\nhp["backend"] = "nccl"', "nccl"),
    ('hp = {**base}\nhp.update(backend="nccl")', "nccl"),
    ('hp = base.copy()\nhp.update({"backend": "nccl"})', "nccl"),
    ('hp = copy.deepcopy(base)\nhp |= {"backend": "nccl"}', "nccl"),
    ('hp = copy.copy(base)\nhp.setdefault("backend", "nccl")', "smddp"),  # already set: setdefault keeps it
    ('cfg = {"hp": dict(base)}\ncfg["hp"]["backend"] = "nccl"\nhp = cfg["hp"]', "nccl"),
    ('hp = dict(base)\nhp.update(make_overrides())', None),  # unknown: not guessed
])
def test_dict_copies_and_changes_are_followed(tmp_path, lines, backend):
    body = "\n".join(["import copy", "from sagemaker.pytorch import PyTorch", 'base = {"backend": "smddp"}', lines,
                      'PyTorch(entry_point="t.py", instance_type="ml.p5.48xlarge", hyperparameters=hp)'])
    (tmp_path / "launch.py").write_text(body + "\n")
    from smddp_infra.preflight.inputs import read_input

    [job] = read_input(tmp_path / "launch.py").jobs
    if backend is None:
        assert job.hyperparameters_unknown is not None
    else:
        assert job.hyperparameters == {"backend": backend}


def test_a_helper_called_twice_builds_two_jobs_each_judged_once(tmp_path):
    write(tmp_path, {"src/train.py": """
        import smdistributed.dataparallel.torch.torch_smddp
        import torch.distributed as dist
        dist.init_process_group(backend="smddp")
    """, "launch.py": """
        from sagemaker.pytorch import PyTorch
        def make(instance_type):
            return PyTorch(entry_point="train.py", source_dir="src", instance_type=instance_type, instance_count=2)
        a = make("ml.p4d.24xlarge")
        b = make("ml.g5.48xlarge")
        c = make("ml.g5.48xlarge")
    """})
    report = run_preflight(tmp_path / "launch.py")
    assert [j.job.instance_type for j in report.jobs] == ["ml.p4d.24xlarge", "ml.g5.48xlarge", "ml.g5.48xlarge"]
    assert [(j.job.label, [f.severity for f in j.findings]) for j in report.jobs] == [
        ("a (launch.py:3)", []), ("b (launch.py:3)", ["error"]), ("c (launch.py:3)", ["error"])]
    assert [f.rule_id for f in report.findings] == ["PF-SMDDP-INSTANCE"]  # the same finding twice is said once


# ---------------------------------------------------------------- missing things are errors


def test_a_source_dir_nothing_creates_is_an_error_and_a_cloned_one_is_not():
    [f] = run_preflight(CORPUS / "c33_missing_source_dir" / "finetune.ipynb").findings
    assert (f.rule_id, f.severity, f.location) == ("PF-SOURCE-DIR-MISSING", "error", "finetune.ipynb cell 3 line 3: source_dir")
    assert 'No file named "train.py" was found in directory "scripts"' in f.message
    cloned = run_preflight(CORPUS / "c33_missing_source_dir" / "cloned.ipynb")
    assert cloned.findings == () and any("examples/training" in n for n in cloned.not_evaluated)


def test_source_dir_missing_cases(tmp_path):
    write(tmp_path, {"repo/src/train.py": "print(1)\n", "repo/launch/a.py": """
        from sagemaker.pytorch import PyTorch
        PyTorch(entry_point="train.py", source_dir="src", instance_type="ml.p4d.24xlarge")  # run from repo/
    """, "repo/launch/b.py": """
        from sagemaker.pytorch import PyTorch
        PyTorch(entry_point="train.py", source_dir="code", instance_type="ml.p4d.24xlarge",
                git_config={"repo": "https://git.example.com/x.git"})
    """, "repo/launch/c.py": """
        import os
        from sagemaker.pytorch import PyTorch
        os.makedirs("generated", exist_ok=True)
        PyTorch(entry_point="train.py", source_dir="generated", instance_type="ml.p4d.24xlarge")
    """, "repo/launch/d.py": """
        from sagemaker.modules.configs import Compute, SourceCode, StoppingCondition
        from sagemaker.modules.train import ModelTrainer
        ModelTrainer(source_code=SourceCode(source_dir="nowhere", entry_script="train.py"),
                     compute=Compute(instance_type="ml.p5.48xlarge", instance_count=1),
                     stopping_condition=StoppingCondition(max_runtime_in_seconds=3600))
    """})
    write(tmp_path, {"repo/launch/e.py": """
        import os
        from sagemaker.pytorch import PyTorch
        PyTorch(entry_point="train.py", source_dir="/home/ec2-user/SageMaker/project/src", instance_type="ml.p4d.24xlarge")
        PyTorch(entry_point="train.py", source_dir=os.path.join(os.getcwd(), "src"), instance_type="ml.p4d.24xlarge")
    """, "repo/launch/f.py": """
        import os
        from sagemaker.pytorch import PyTorch
        PyTorch(entry_point="train.py", source_dir=os.path.join(os.getcwd(), "missing"), instance_type="ml.p4d.24xlarge")
    """})
    assert [f.rule_id for f in run_preflight(tmp_path / "repo" / "launch" / "f.py").findings] == ["PF-SOURCE-DIR-MISSING"]
    for name in ("a", "b", "c", "e"):
        assert by_rule(run_preflight(tmp_path / "repo" / "launch" / f"{name}.py"), "PF-SOURCE-DIR-MISSING") == [], name
    [f] = run_preflight(tmp_path / "repo" / "launch" / "d.py").findings
    assert (f.rule_id, f.location) == ("PF-SOURCE-DIR-MISSING", "d.py:3: source_code.source_dir")
    assert "Invalid 'source_dir' path: nowhere" in f.message


def test_a_misspelled_instance_type_is_an_error_from_botocores_enum_and_nothing_else_is_said_about_it():
    [f] = run_preflight(CORPUS / "c34_misspelled_type" / "launch.py").findings
    assert (f.rule_id, f.severity) == ("PF-INSTANCE-TYPE-UNKNOWN", "error")
    assert "TrainingInstanceType" in f.message and f.fix == "instance_type='ml.p4d.24xlarge'"


@pytest.mark.parametrize("instance_type, expected", [
    ("ml.g5.12xlarge", []), ("ml.trn2.48xlarge", []), ("local_gpu", []),
    ("ml.p4dn.24xlarge", ["PF-INSTANCE-TYPE-UNKNOWN"]), ("ml.g5.96xlarge", ["PF-INSTANCE-TYPE-UNKNOWN"]),
    ("p4d.24xlarge", ["PF-INSTANCE-TYPE-UNKNOWN"]),
])
def test_instance_types_are_checked_against_the_enum(tmp_path, instance_type, expected):
    import botocore.session

    enum = set(botocore.session.get_session().get_service_model("sagemaker").shape_for("TrainingInstanceType").enum)
    assert (instance_type in enum or instance_type.startswith("local")) == (expected == [])  # the fixture's own check
    (tmp_path / "job.yaml").write_text(f"instance_type: {instance_type}\ninstance_count: 1\n")
    assert [f.rule_id for f in run_preflight(tmp_path / "job.yaml").findings] == expected


# ---------------------------------------------------------------- recipes


def test_a_from_recipe_job_is_a_job_and_its_local_recipe_is_read():
    report = run_preflight(CORPUS / "c35_recipe" / "launch_v3.py")
    [job] = report.jobs
    assert (job.job.estimator, job.job.instance_count, job.job.launcher[0]) == ("ModelTrainer", 4, "torchrun")
    [f] = report.findings
    assert (f.rule_id, f.severity) == ("PF-SMDDP-INSTANCE", "error")
    assert "llama3_8b_pretrain.yaml:17" in f.message and "distributed_backend: nccl" in f.fix


def test_a_recipe_name_is_not_fetched_and_that_is_said_once():
    report = run_preflight(CORPUS / "c35_recipe" / "launch_v2.py")
    assert report.findings == ()
    assert [n for n in report.not_evaluated if "recipe" in n] == [
        "recipe rules not evaluated: training_recipe training/llama/hf_llama3_8b_seq8k_gpu_p5x16_pretrain is a recipe "
        "from the SDK's recipe repository; preflight does not fetch it (pass a local copy of the YAML to have its "
        "backend and node count read)"]


def test_recipe_overrides_decide_the_backend_and_a_missing_stopping_condition_is_the_one_hour_default(tmp_path):
    recipe = (CORPUS / "c35_recipe" / "recipes" / "llama3_8b_pretrain.yaml").read_text()
    write(tmp_path, {"r.yaml": recipe, "launch.py": """
        from sagemaker.train import ModelTrainer
        from sagemaker.train.configs import Compute
        t = ModelTrainer.from_recipe("r.yaml", compute=Compute(instance_type="ml.p5.48xlarge", instance_count=2),
                                     recipe_overrides={"distributed_backend": "nccl"})
    """})
    report = run_preflight(tmp_path / "launch.py")
    assert [f.rule_id for f in report.findings] == ["PF-STOPPING-CONDITION"]
    assert report.jobs[0].facts.smddp.backend == "nccl" and report.jobs[0].job.instance_count == 2


# ---------------------------------------------------------------- scripts started by launchers


def test_a_deepspeed_command_list_in_subprocess_is_followed():
    report = run_preflight(CORPUS / "c36_deepspeed_subprocess" / "launch.py")
    assert [s.name for s in report.scripts] == ["launcher.py", "train_ds.py"]
    assert [(f.rule_id, f.location) for f in report.findings] == [("PF-DATALOADER-SAMPLER", "train_ds.py:11")]


def test_an_accelerate_command_on_the_code_channel_path_maps_back_to_source_dir():
    report = run_preflight(CORPUS / "c37_accelerate_command" / "submit.py")
    assert [s.name for s in report.scripts] == ["train_acc.py"]
    [f] = report.findings  # environment={"USE_SMDDP": "1"} decides the guard
    assert (f.rule_id, f.severity) == ("PF-SMDDP-INSTANCE", "error") and "train_acc.py:10" in f.message


def test_torchrun_dash_m_after_cd_opt_ml_code_is_followed():
    report = run_preflight(CORPUS / "c38_module_launch" / "launch.py")
    assert [s.name for s in report.scripts] == ["trainer/main.py"]
    assert {f.rule_id for f in report.findings} == {"PF-DEPRECATED-SMDDP-API", "PF-NON-PYTHON-ENTRY-POINT"}


@pytest.mark.parametrize("line, script", [
    ("python -m torch.distributed.run --nproc_per_node 8 train.py", "train.py"),
    ("torchrun --nproc_per_node=8 -m pkg.train --lr 3", "pkg/train.py"),
    ("python3 -m deepspeed.launcher.runner --num_gpus 8 ds.py", "ds.py"),
    ("accelerate launch --config_file acc.yaml run.py", "run.py"),
    ("python -m pip install -r requirements.txt", "pip.py"),  # not in source_dir: an installed module, not noted
])
def test_launcher_lines_name_their_script(line, script):
    from smddp_infra.preflight.shell import python_calls

    [call] = python_calls(line)
    assert call.script == script


@pytest.mark.parametrize("call", [
    'subprocess.run(["accelerate", "launch", "--num_processes", str(n), "t.py"])',
    'subprocess.check_call(f"torchrun --nproc_per_node {n} t.py --epochs {e}", shell=True)',
    'os.system("deepspeed --num_gpus " + str(n) + " t.py")',
    'subprocess.Popen(args=["python", "-m", "t"])',
])
def test_subprocess_command_lines_with_unknown_parts_still_name_the_script(tmp_path, call):
    write(tmp_path, {"src/t.py": "import smdistributed.dataparallel.torch.distributed as sdp\n", "src/go.py": f"""
        import os
        import subprocess
        n, e = os.environ["N"], 3
        {call}
    """, "job.yaml": "entry_point: go.py\nsource_dir: src\n"})
    report = run_preflight(tmp_path / "job.yaml")
    assert [s.name for s in report.scripts] == ["go.py", "t.py"]


def test_an_installed_module_started_with_dash_m_is_not_a_missing_script(tmp_path):
    write(tmp_path, {"code/run.sh": "python -m pip install -r requirements.txt\npython train.py\n",
                     "code/train.py": "print(1)\n", "job.yaml": "entry_point: run.sh\nsource_dir: code\n"})
    report = run_preflight(tmp_path / "job.yaml")
    assert [s.name for s in report.scripts] == ["train.py"] and not any("pip" in n for n in report.not_evaluated)


# ---------------------------------------------------------------- which framework's launchers a fix names

_TORCH_FIX = ('distribution={"torch_distributed": {"enabled": True}} (torchrun; ModelTrainer: distributed=Torchrun()) '
              "and keep the script's backend")
_TF_FIX = ('distribution={"multi_worker_mirrored_strategy": {"enabled": True}} (or {"mpi": {"enabled": True}} for '
           "Horovod), and keep the script's collectives")


@pytest.mark.parametrize("estimator, script, fix", [
    ("PyTorch", "import torch\n", _TORCH_FIX),
    ("PyTorch", "import tensorflow.keras.layers as layers\n", _TF_FIX),  # the program imports tensorflow
    ("PyTorch", "import tensorflowjs\n", _TORCH_FIX),  # another package
    ("TensorFlow", "import torch\n", _TF_FIX),  # the estimator says it
])
def test_a_launcher_on_an_unsupported_type_gets_its_frameworks_launchers(tmp_path, estimator, script, fix):
    (tmp_path / "train.py").write_text(script)
    (tmp_path / "job.yaml").write_text(f"entry_point: train.py\nestimator: {estimator}\ninstance_type: ml.g5.12xlarge\n"
                                       "instance_count: 2\ndistribution: {smdistributed: {dataparallel: {enabled: true}}}\n")
    (finding,) = by_rule(run_preflight(tmp_path / "job.yaml"), "PF-SMDDP-LAUNCHER")
    assert finding.fix == fix
    assert finding.message == (
        'distribution={"smdistributed": {"dataparallel": {"enabled": True}}} is a launcher, not the SMDDP collectives: '
        "SDK v2 starts the processes with mpirun and smddprun; preflight sees no smddp backend in the program; SMDDP "
        "does not support ml.g5.12xlarge, and whether smddprun starts in the image there is UNCONFIRMED")


def test_a_tensorflow_training_image_makes_a_tensorflow_job(tmp_path):
    request = json.loads((ROOT / "tests" / "fixtures" / "preflight" / "api" / "create-request.json").read_text())
    request["AlgorithmSpecification"]["TrainingImage"] = (
        "763104351884.dkr.ecr.us-east-1.amazonaws.com/tensorflow-training:2.14.1-gpu-py310-cu118-ubuntu20.04-sagemaker")
    del request["ResourceConfig"]["KeepAliveTimeInSeconds"]
    (tmp_path / "request.json").write_text(json.dumps(request))
    (finding,) = by_rule(run_preflight(tmp_path / "request.json"), "PF-SMDDP-LAUNCHER")
    assert finding.fix == _TF_FIX


def test_the_tensorflow_smddp_api_makes_a_tensorflow_job_whatever_the_estimator(tmp_path):
    (tmp_path / "train.py").write_text("import smdistributed.dataparallel.tensorflow as sdp\nsdp.init()\n")
    (tmp_path / "job.yaml").write_text("entry_point: train.py\ninstance_type: ml.g5.48xlarge\ninstance_count: 2\n")
    (finding,) = by_rule(run_preflight(tmp_path / "job.yaml"), "PF-SMDDP-INSTANCE")
    assert finding.fix == (
        "keep ml.g5.48xlarge and replace smdistributed.dataparallel.tensorflow with tf.distribute.MultiWorkerMirroredStrategy "
        '(NCCL), launched with distribution={"multi_worker_mirrored_strategy": {"enabled": True}} (or Horovod with '
        '{"mpi": {"enabled": True}}); or instance_type: ml.p4d.24xlarge to keep SMDDP')


def test_a_recipe_that_starts_smddp_is_judged_with_no_script_to_read(tmp_path):
    """An SDK v2 recipe job has no entry point preflight reads: the recipe's distributed_backend is the evidence."""
    (tmp_path / "recipes").mkdir()
    shutil.copy(CORPUS / "c35_recipe" / "recipes" / "llama3_8b_pretrain.yaml", tmp_path / "recipes")
    (tmp_path / "launch.py").write_text(
        "from sagemaker.pytorch import PyTorch\n"
        'job = PyTorch(role="arn:aws:iam::111122223333:role/R", instance_type="ml.g5.48xlarge", instance_count=2,\n'
        '              training_recipe="recipes/llama3_8b_pretrain.yaml",\n'
        '              distribution={"smdistributed": {"dataparallel": {"enabled": True}}})\n'
        "job.fit()\n")
    (finding,) = by_rule(run_preflight(tmp_path / "launch.py"), "PF-SMDDP-INSTANCE")
    assert finding.severity == "error"
    assert finding.message.startswith("llama3_8b_pretrain.yaml:17 `distributed_backend: smddp` (the training recipe) starts "
                                      "the smddp backend, and the job runs on ml.g5.48xlarge")


def test_a_script_that_only_tries_smddp_is_told_to_fall_back_to_nccl(tmp_path):
    (tmp_path / "train.py").write_text(
        "try:\n    import smdistributed.dataparallel.torch.torch_smddp\nexcept ImportError:\n    pass\n")
    (tmp_path / "job.yaml").write_text("entry_point: train.py\ninstance_type: ml.g5.48xlarge\ninstance_count: 2\n")
    (finding,) = by_rule(run_preflight(tmp_path / "job.yaml"), "PF-SMDDP-INSTANCE")
    assert (finding.severity, finding.location, finding.message, finding.fix) == (
        "info", "job.yaml: instance_type",
        "the script tries SMDDP (train.py:2 `import smdistributed.dataparallel.torch.torch_smddp`) but catches a failed "
        "import: on ml.g5.48xlarge, which SMDDP does not support, make sure it then falls back to NCCL",
        'init_process_group(backend="nccl") when smdistributed is missing (current PyTorch DLCs carry none)')


def test_smddp_on_a_type_only_older_releases_served_is_a_warning_word_for_word(tmp_path):
    (tmp_path / "train.py").write_text('import torch.distributed as dist\ndist.init_process_group(backend="smddp")\n')
    (tmp_path / "job.yaml").write_text("entry_point: train.py\ninstance_type: ml.p3.16xlarge\ninstance_count: 2\n")
    (finding,) = by_rule(run_preflight(tmp_path / "job.yaml"), "PF-SMDDP-INSTANCE")
    assert (finding.severity, finding.location, finding.message, finding.fix) == (
        "warning", "job.yaml: instance_type",
        'SMDDP (train.py:2 `dist.init_process_group(backend="smddp")`) on ml.p3.16xlarge: the SDK v2 allow-list admits '
        "it, but only older SMDDP releases served it; current releases support ml.p4d.24xlarge, ml.p4de.24xlarge",
        "instance_type: ml.p4d.24xlarge (or ml.p4de.24xlarge)")


@pytest.mark.parametrize("instance_type", ["local", "local_gpu"])
def test_local_mode_provisions_nothing_so_no_launcher_warning(tmp_path, instance_type):
    (tmp_path / "train.py").write_text('import torch.distributed as dist\ndist.init_process_group(backend="nccl")\n')
    (tmp_path / "job.yaml").write_text(f"entry_point: train.py\ninstance_type: {instance_type}\ninstance_count: 1\n"
                                       "distribution: {smdistributed: {dataparallel: {enabled: true}}}\n")
    assert not by_rule(run_preflight(tmp_path / "job.yaml"), "PF-SMDDP-LAUNCHER")
    (tmp_path / "job.yaml").write_text("entry_point: train.py\ninstance_type: ml.g5.12xlarge\ninstance_count: 1\n"
                                       "distribution: {smdistributed: {dataparallel: {enabled: true}}}\n")
    assert by_rule(run_preflight(tmp_path / "job.yaml"), "PF-SMDDP-LAUNCHER"), "the control: a real type is judged"
