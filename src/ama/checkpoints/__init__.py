"""File checkpoints for rewind: blob store, tracker, restore, shadow git, clean-up.

See docs/checkpoints.md.  Importing this package starts no process and reads no file.
"""

from ama.checkpoints.blobs import BlobStore
from ama.checkpoints.gc import collect_garbage, register_sessions_dir, usage
from ama.checkpoints.githead import read_git_head
from ama.checkpoints.paths import shadow_repo_dir
from ama.checkpoints.records import CheckpointData, CodeRestoreResult, FileRecord
from ama.checkpoints.tracker import CheckpointTracker

__all__ = [
    "BlobStore",
    "CheckpointData",
    "CheckpointTracker",
    "CodeRestoreResult",
    "FileRecord",
    "collect_garbage",
    "read_git_head",
    "register_sessions_dir",
    "shadow_repo_dir",
    "usage",
]
