import { definePlugin } from "yohost";

const broken: = 3;

export default definePlugin({});
