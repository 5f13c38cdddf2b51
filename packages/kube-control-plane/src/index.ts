export {
  startControlPlane,
  DEFAULT_KUBE_APISERVER_BIN,
  CONTROL_PLANE_SCRIPTS_DIR,
  type ControlPlane,
  type KubeConfigOptions,
  type StartControlPlaneOptions,
} from './control-plane';
export { PORT_RESERVATIONS_DIR } from './ports';
