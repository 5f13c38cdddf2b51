/** The part of every Kubernetes object the emulator's generic code reads. */
export interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
}
