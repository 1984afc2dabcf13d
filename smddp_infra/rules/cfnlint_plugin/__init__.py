"""cfn-lint plugin: ``cfn-lint --append-rules smddp_infra.rules.cfnlint_plugin template.yaml``.

cfn-lint loads every CloudFormationLintRule subclass visible in this module; they are
defined in :mod:`.smddp_rules` (also loadable by directory path:
``cfn-lint --append-rules "$(python -c 'import smddp_infra.rules.cfnlint_plugin as p, os; print(os.path.dirname(p.__file__))')"``).
Id mapping (docs/rules.md): SMDDP-SG1 E9101, SG2 E9102, SG3 I9103, FSX1 E9201, FSX2 W9202,
FSX3 E9203, FSX4 W9204, FSX5 E9205, FSX6 W9206, NET1 E9301, NET2 E9302, NET3 W9303, NET4 W9304,
STATE1 W9401, STATE2 I9402, EKS1 E9501, EKS2 W9502, GOV1 E9601,
GOV2 W9602, GOV3 E9603, INFO1 I9001 (informational: shown with ``--include-checks I``).
"""

from smddp_infra.rules.cfnlint_plugin.smddp_rules import *  # noqa: F401,F403
from smddp_infra.rules.cfnlint_plugin.smddp_rules import __all__  # noqa: F401
