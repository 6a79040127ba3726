"""The Celery app a production worker runs: ``celery -A simready.resources.celery_app worker``.

dagster-celery's own worker app (``dagster_celery.app``) reads its settings from a config module it writes into
the instance's folder; this one builds the same app from the deployment's settings (the broker from
``SIMREADY_CELERY_BROKER``, :data:`~simready.resources.CELERY_CONFIG_SOURCE`), so the workers and the executor
that sends them steps cannot disagree. A worker needs the code (this package) and the environment of the
production deployment; it shares no disk with the run or with other workers.
"""

import os

from dagster_celery.executor import CeleryExecutor
from dagster_celery.make_app import make_app
from dagster_celery.tasks import create_task

from simready.common.parallel import WORKERS_ENV
from simready.resources import CELERY_CONFIG_SOURCE
from simready.store.deployment import PRODUCTION_ENV as _ENV
from simready.store.deployment import DeploymentError

# A production worker is one core (docs/scale.md): its steps work on their samples one after the other unless the
# worker's environment gives it more (SIMREADY_WORKERS, simready.common.parallel).
os.environ.setdefault(WORKERS_ENV, "1")

_broker = os.environ.get("SIMREADY_CELERY_BROKER")
if not _broker:
    raise DeploymentError("SIMREADY_CELERY_BROKER", "", f"not set; a worker needs {_ENV['SIMREADY_CELERY_BROKER']}")

#: Built as the executor builds its own (``CeleryExecutor.app_args``), from the same settings.
app = make_app(CeleryExecutor.for_cli(broker=_broker, backend=_broker, config_source=CELERY_CONFIG_SOURCE).app_args())
execute_plan = create_task(app)
